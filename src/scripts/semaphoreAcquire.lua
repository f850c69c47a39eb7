-- semaphoreAcquire: take a semaphore's permit slots, all or none, if the
-- resource's limit is the one the caller states. Each slot is a mutex key
-- (SET NX semantics); a holder's lease is the key's TTL, so an expired
-- holder is gone with its key and nothing needs pruning.
-- KEYS[1]     the resource's limit record
-- KEYS[2..n]  the permit slots to take
-- ARGV[1]     the holder's random value
-- ARGV[2]     TTL in milliseconds
-- ARGV[3]     the limit the caller states
-- Returns 1 when every slot now holds the value (the limit record then lasts
-- at least the TTL, so it outlives every slot beside it), 0 when any slot is
-- held (nothing is written), or minus the recorded limit when the record
-- holds another limit (nothing is written).
local limitKey = KEYS[1]
local value = ARGV[1]
local ttl = tonumber(ARGV[2])
local limit = ARGV[3]

local recorded = redis.call('GET', limitKey)
if recorded and recorded ~= limit then
  return -tonumber(recorded)
end
for i = 2, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    return 0
  end
end
for i = 2, #KEYS do
  redis.call('SET', KEYS[i], value, 'PX', ttl)
end
if redis.call('PTTL', limitKey) < ttl then
  redis.call('SET', limitKey, limit, 'PX', ttl)
end
return 1
