-- acquire: take every resource or none, atomically on this node.
-- KEYS[1..n]  the resources
-- ARGV[1]     the lock's random value
-- ARGV[2]     TTL in milliseconds
-- Returns 1 when every key now holds the value with the TTL (also when some
-- already held it: a retried request whose first reply was lost), or 0 when
-- any key holds another value (nothing is written then).
local value = ARGV[1]
local ttl = ARGV[2]

for i = 1, #KEYS do
  local current = redis.call('GET', KEYS[i])
  if current and current ~= value then
    return 0
  end
end

for i = 1, #KEYS do
  redis.call('SET', KEYS[i], value, 'PX', ttl)
end
return 1
