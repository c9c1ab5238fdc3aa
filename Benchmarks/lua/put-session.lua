-- wrk: `PUT /sessions/{id}` round-robin over s0…s{N-1}: each a replacement once the first pass
-- created them (every one a write the answer waits for when sheetd has a store).
-- The session count comes from the environment (SESSIONS, default 10000).
local sessions = tonumber(os.getenv("SESSIONS") or "10000")
local counter = 0
wrk.method = "PUT"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"preset":"facebook","initialDetent":"normal"}'
request = function()
    counter = counter + 1
    return wrk.format(nil, "/sessions/s" .. (counter % sessions))
end
