-- inspect: reads one resource's state on this node and writes nothing (the
-- library's inspect() and the CLI's status). It reads TIME only to tell live
-- places in the wait line from places whose lease passed; with no write
-- after it, no redis.replicate_commands() is needed.
-- KEYS[1]  the resource
-- KEYS[2]  its wait line (ZSET value -> ticket), KEYS[3] its leases (ZSET
--          value -> server ms until which the place is held) (lineKeys.ts)
-- no ARGV
-- Returns {stored value or nil, PTTL of the resource (-2 absent, -1 no
-- expiry), waiters whose lease has not passed, places in the line}.
local stored = redis.call('GET', KEYS[1])
local pttl = redis.call('PTTL', KEYS[1])
local places = redis.call('ZCARD', KEYS[2])
local live = 0
if places > 0 then
  local time = redis.call('TIME')
  local now_ms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  live = redis.call('ZCOUNT', KEYS[3], '(' .. now_ms, '+inf')
end
-- false, not nil: a nil would end the reply array there.
return {stored or false, pttl, live, places}
