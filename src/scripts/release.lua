-- release: delete each resource that still holds our value, marked or not
-- (compare-and-delete), and announce the deletions that waiters listen for,
-- so that they retry at once instead of polling. A deleted key K is announced
-- on 'quorumlock:released:' .. K (RELEASE_CHANNEL_PREFIX in release.ts).
-- KEYS[1..n]  the resources
-- ARGV[1]     the lock's random value
-- ARGV[2]     absent: announce only the keys a waiter marked with a trailing
--             '!' (acquire.lua); 'all': every deletion (the caller's process
--             has waiters in line); 'none': nothing (undoing a failed
--             attempt). The commonest call passes one argument: each one more
--             was a tenth of this script's server time.
-- Returns the number of keys deleted; keys that expired or hold another value
-- are left alone, so releasing an expired lock returns 0 and is not an error.
local value = ARGV[1]
local announce = ARGV[2]
local released = 0

for i = 1, #KEYS do
  local key = KEYS[i]
  local current = redis.call('GET', key)
  if current == value then
    redis.call('DEL', key)
    released = released + 1
    if announce == 'all' then
      redis.call('PUBLISH', 'quorumlock:released:' .. key, '')
    end
  elseif current == value .. '!' then
    redis.call('DEL', key)
    released = released + 1
    if announce ~= 'none' then
      redis.call('PUBLISH', 'quorumlock:released:' .. key, '')
    end
  end
end
return released
