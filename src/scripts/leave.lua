-- leave: a waiter steps out of its resources' wait lines. One that gave up
-- (timed out, aborted) also gives back a reservation handed to it and not
-- yet taken, to the next live head (a reader's, in a read-write lock's
-- readers' set, is removed); one that holds the lock keeps its keys.
-- KEYS[1..n]     the resources
-- KEYS[n+1..3n]  each resource's line and lease (lineKeys.ts)
-- ARGV[1]        the waiter's value
-- ARGV[2]        'gave-up' or 'acquired'
-- ARGV[3]        the reservation in ms for a handoff
-- Returns the number of lines it left.
-- Before Redis 7 a script that reads TIME must replicate its effects, not itself.
if redis.replicate_commands then redis.replicate_commands() end
local value = ARGV[1]
local n = #KEYS / 3
local left = 0
local now_ms, now_us = nil, nil
for i = 1, n do
  local key, line, lease = KEYS[i], KEYS[n + 2 * i - 1], KEYS[n + 2 * i]
  left = left + redis.call('ZREM', line, value)
  redis.call('ZREM', lease, value)
  if ARGV[2] == 'gave-up' then
    if redis.call('TYPE', key).ok == 'zset' then
      -- A read-write lock's readers: a reservation a writer's release
      -- handed this reader goes with it (rwWake.lua's grant_readers).
      redis.call('ZREM', key, value)
    else
      local current = redis.call('GET', key)
      if current == value or current == value .. '!' then
        redis.call('DEL', key)
        if not now_ms then now_ms, now_us = server_time() end
        hand_off(key, line, lease, now_ms, now_us, ARGV[3])
      end
    end
  end
end
return left
