-- keepalive: one process's waiters hold their places in the wait lines, all
-- in one request per node and period; a place already gone (pruned while its
-- waiter was paused) is not brought back: its next attempt joins at the back.
-- KEYS[3i-2..3i]  for the i-th entry: a resource's line, lease and ticket
--                 counter (lineKeys.ts)
-- ARGV[1]         the lease in ms (also every line key's PEXPIRE)
-- ARGV[2i], [2i+1] for the i-th entry: the waiter's value and ticket; a
--                 larger ticket than its place's (the maximum over a Redlock's
--                 nodes) raises the place, and the counter with it
-- Returns how many entries still had their place.
-- Before Redis 7 a script that reads TIME must replicate its effects, not itself.
if redis.replicate_commands then redis.replicate_commands() end
local lease_ms = tonumber(ARGV[1])
local now_ms = server_time()
local kept = 0
for i = 1, #KEYS / 3 do
  local line, lease, counter = KEYS[3 * i - 2], KEYS[3 * i - 1], KEYS[3 * i]
  local value, ticket = ARGV[2 * i], tonumber(ARGV[2 * i + 1])
  local score = tonumber(redis.call('ZSCORE', line, value))
  if score then
    kept = kept + 1
    if ticket > score then
      redis.call('ZADD', line, ARGV[2 * i + 1], value)
      if (tonumber(redis.call('GET', counter)) or 0) < ticket then redis.call('SET', counter, ARGV[2 * i + 1]) end
    end
    redis.call('ZADD', lease, string.format('%.0f', now_ms + lease_ms), value)
    redis.call('PEXPIRE', line, lease_ms)
    redis.call('PEXPIRE', lease, lease_ms)
    redis.call('PEXPIRE', counter, lease_ms)
  end
end
return kept
