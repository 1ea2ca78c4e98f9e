-- Releases the coordinator lock if this coordinator still holds it.
-- KEYS[1] lock. ARGV[1] this coordinator's token.
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
