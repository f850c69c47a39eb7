-- release: delete each resource that still holds our value, marked or not
-- (compare-and-delete), and announce the deletions that waiters listen for,
-- so that they retry at once instead of polling.
-- KEYS[1..n]  the resources
-- ARGV[1]     the lock's random value
-- ARGV[2]     channel prefix: a deleted key K is announced on ARGV[2] .. K;
--             empty to announce nothing (undoing a failed attempt)
-- ARGV[3]     'all' to announce every deletion (the caller's process has
--             waiters in line); otherwise only keys that a waiter marked
--             with a trailing '!' (acquire.lua)
-- Returns the number of keys deleted; keys that expired or hold another value
-- are left alone, so releasing an expired lock returns 0 and is not an error.
local value = ARGV[1]
local marked = value .. '!'
local channelPrefix = ARGV[2]
local announceAll = ARGV[3] == 'all'
local released = 0

for i = 1, #KEYS do
  local current = redis.call('GET', KEYS[i])
  if current == value or current == marked then
    redis.call('DEL', KEYS[i])
    if channelPrefix ~= '' and (announceAll or current == marked) then
      redis.call('PUBLISH', channelPrefix .. KEYS[i], '')
    end
    released = released + 1
  end
end
return released
