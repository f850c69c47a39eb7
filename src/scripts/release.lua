-- release: delete each resource that still holds our value (compare-and-delete),
-- and announce each deletion so that waiters retry at once instead of polling.
-- KEYS[1..n]  the resources
-- ARGV[1]     the lock's random value
-- ARGV[2]     channel prefix: a deleted key K is announced on ARGV[2] .. K;
--             empty to announce nothing (undoing a failed attempt)
-- Returns the number of keys deleted; keys that expired or hold another value
-- are left alone, so releasing an expired lock returns 0 and is not an error.
local value = ARGV[1]
local channelPrefix = ARGV[2]
local released = 0

for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) == value then
    redis.call('DEL', KEYS[i])
    if channelPrefix ~= '' then
      redis.call('PUBLISH', channelPrefix .. KEYS[i], '')
    end
    released = released + 1
  end
end
return released
