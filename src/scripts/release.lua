-- release: delete each resource that still holds our value (compare-and-delete).
-- KEYS[1..n]  the resources
-- ARGV[1]     the lock's random value
-- Returns the number of keys deleted; keys that expired or hold another value
-- are left alone, so releasing an expired lock returns 0 and is not an error.
local value = ARGV[1]
local released = 0

for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) == value then
    redis.call('DEL', KEYS[i])
    released = released + 1
  end
end
return released
