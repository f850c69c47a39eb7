-- fencedWrite: a protected resource that checks fencing tokens, as a storage
-- service should: a write is applied only if its token is not smaller than
-- the largest token the resource has seen.
-- KEYS[1]  the resource's data
-- KEYS[2]  the largest token seen so far
-- ARGV[1]  the token of the writer (decimal)
-- ARGV[2]  the data to write
-- Returns 1 when written, 0 when refused as stale.
local seen = tonumber(redis.call('GET', KEYS[2]) or '0')
local token = tonumber(ARGV[1])
if token < seen then
  return 0
end
redis.call('SET', KEYS[2], ARGV[1])
redis.call('SET', KEYS[1], ARGV[2])
return 1
