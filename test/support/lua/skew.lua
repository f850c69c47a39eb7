-- skew.lua: emulate a node whose clock runs fast (or jumps) by taking time off
-- the remaining TTL of every key, as the node itself would have counted it.
-- Test-only: it SCANs the whole keyspace of the selected db (not cluster-safe).
-- Works on Redis 5 and later.
--
-- KEYS:    none (keys are found with SCAN).
-- ARGV[1]: milliseconds to take off each remaining TTL (integer; negative
--          lengthens TTLs, i.e. a slow clock).
-- ARGV[2]: SCAN MATCH pattern, e.g. '*' or 'lock:*'.
-- ARGV[3]: SCAN COUNT hint.
-- Returns: { adjusted, deleted }: keys given a shorter/longer TTL, and keys
--          deleted because their TTL would have reached <= 0. Keys without a
--          TTL are left alone.

-- Redis 5: allow writes after the non-deterministic SCAN (no-op on Redis 7).
if redis.replicate_commands then pcall(redis.replicate_commands) end

local shift = tonumber(ARGV[1])
local pattern = ARGV[2]
local count = ARGV[3]
local adjusted, deleted = 0, 0
if shift == nil or shift == 0 then return { adjusted, deleted } end

local seen = {}
local cursor = '0'
repeat
  local reply = redis.call('SCAN', cursor, 'MATCH', pattern, 'COUNT', count)
  cursor = reply[1]
  for _, key in ipairs(reply[2]) do
    -- SCAN may return a key twice; shift each key once.
    if not seen[key] then
      seen[key] = true
      local ttl = redis.call('PTTL', key)
      if ttl >= 0 then
        local left = ttl - shift
        if left <= 0 then
          redis.call('DEL', key)
          deleted = deleted + 1
        else
          redis.call('PEXPIRE', key, left)
          adjusted = adjusted + 1
        end
      end
    end
  end
until cursor == '0'
return { adjusted, deleted }
