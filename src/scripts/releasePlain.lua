-- releasePlain: the release of a lock taken without contention, by a process
-- with no waiter of its own for it: delete each resource that still holds
-- our value (compare-and-delete). It names no line key, so a release nobody
-- waited for costs what it cost before the wait lines existed. If a waiter
-- marked any of the keys while we held them, it deletes nothing and returns
-- -1: the caller then releases through release.lua, which hands the keys to
-- the first waiters of their lines.
-- KEYS[1..n]  the resources
-- ARGV[1]     the lock's random value
-- Returns the number of keys deleted (keys that expired or hold another value
-- are left alone, so releasing an expired lock returns 0 and is not an
-- error), or -1 when a waiter marked one of ours.
local value = ARGV[1]
local marked = value .. '!'

local current = {}
for i = 1, #KEYS do
  current[i] = redis.call('GET', KEYS[i])
  if current[i] == marked then return -1 end
end
local released = 0
for i = 1, #KEYS do
  -- DEL's own count: a key named twice is deleted once.
  if current[i] == value then released = released + redis.call('DEL', KEYS[i]) end
end
return released
