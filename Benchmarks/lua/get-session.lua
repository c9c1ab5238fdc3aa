-- wrk: `GET /sessions/{id}` round-robin over pre-created sessions s0…s{N-1}.
-- The session count comes from the environment (SESSIONS, default 10000).
local sessions = tonumber(os.getenv("SESSIONS") or "10000")
local counter = 0
wrk.method = "GET"
request = function()
    counter = counter + 1
    return wrk.format(nil, "/sessions/s" .. (counter % sessions))
end
