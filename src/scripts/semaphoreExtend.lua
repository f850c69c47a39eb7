-- semaphoreExtend: give a holder's permit slots a new TTL, only if every one
-- still holds its value, and keep the limit record alive at least as long
-- (renewed for twice the TTL, as semaphoreAcquire.lua does).
-- KEYS[1]     the resource's limit record
-- KEYS[2..n]  the holder's permit slots
-- ARGV[1]     the holder's random value
-- ARGV[2]     new TTL in milliseconds, counted from now
-- ARGV[3]     the holder's limit
-- Returns 1 when every slot was extended, or 0 when any slot is missing or
-- holds another value, or the record holds another limit (nothing is
-- changed then: another holder is never extended).
local limitKey = KEYS[1]
local value = ARGV[1]
local ttl = tonumber(ARGV[2])
local limit = ARGV[3]

local recorded = redis.call('GET', limitKey)
if recorded and recorded ~= limit then
  return 0
end
for i = 2, #KEYS do
  if redis.call('GET', KEYS[i]) ~= value then
    return 0
  end
end
for i = 2, #KEYS do
  redis.call('PEXPIRE', KEYS[i], ttl)
end
if redis.call('PTTL', limitKey) <= ttl then
  redis.call('SET', limitKey, limit, 'PX', 2 * ttl)
end
return 1
