import CHiredis

// Placeholder while the client is written: replaced by RedisConnection.
