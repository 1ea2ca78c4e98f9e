-- A finished group's payloads are deleted: its `release` entry goes, and its
-- mark is set to expire at ARGV[3] (expire-sweep.lua).
-- KEYS[1] release, KEYS[2] expiring-groups.
-- ARGV[1] the release entry, ARGV[2] the group id, ARGV[3] when its mark
-- expires (ms since the epoch). Returns 1 when the entry was there.
if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 0 then return 0 end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
return 1
