-- semaphoreRecord: helpers shared by the semaphore scripts that take slots
-- (semaphoreAcquire.lua, semaphoreTake.lua): the resource's limit record,
-- which every caller must state alike and which outlives every slot beside
-- it. The source is put in front of theirs; it has no KEYS or ARGV of its
-- own and returns nothing.

-- Minus the recorded limit when the record holds a limit other than `limit`, else nil.
local function other_limit(limit_key, limit)
  local recorded = redis.call('GET', limit_key)
  if recorded and recorded ~= limit then return -tonumber(recorded) end
  return nil
end

-- After slots of `ttl` ms were taken: the record is renewed for twice the
-- TTL when no more than the TTL is left, so the acquires of the next TTL
-- need not write it again. Returns how long it lives on, in ms
-- (LiveLimitRecords.ts trusts it).
local function record_outliving(limit_key, limit, ttl)
  local record_ms = redis.call('PTTL', limit_key)
  if record_ms <= ttl then
    record_ms = 2 * ttl
    redis.call('SET', limit_key, limit, 'PX', record_ms)
  end
  return record_ms
end
