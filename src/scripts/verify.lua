-- verify: whether every resource still holds the lock's value (with or
-- without a waiter's trailing '!', see acquire.lua), and for how long. A
-- process re-enters a lock that another one acquired, by its value, with
-- this (the CLI's nested exec). It writes nothing.
-- KEYS[1..n]  the resources
-- ARGV[1]     the lock's random value
-- Returns the smallest PTTL of the keys in milliseconds when every key holds
-- the value, else 0: a key is missing, holds another value, or has no expiry
-- (quorumlock never sets a key without one).
local value = ARGV[1]
local marked = value .. '!'
local smallest = nil

for i = 1, #KEYS do
  local current = redis.call('GET', KEYS[i])
  if current ~= value and current ~= marked then
    return 0
  end
  local pttl = redis.call('PTTL', KEYS[i])
  if pttl <= 0 then
    return 0
  end
  if smallest == nil or pttl < smallest then
    smallest = pttl
  end
end
return smallest
