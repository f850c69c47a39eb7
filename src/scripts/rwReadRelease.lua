-- rwReadRelease: end a reader's lease.
-- KEYS[1]  the readers' sorted set
-- ARGV[1]  the reader's random value
-- Returns 1 when the reader was removed, 0 when its lease had already ended
-- (releasing an expired read lock is not an error).
return redis.call('ZREM', KEYS[1], ARGV[1])
