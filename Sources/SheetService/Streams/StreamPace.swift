/// How a frame stream sends an animation's frames.
enum StreamPace: String, Sendable {
    /// Frame k leaves when its time comes on the server clock.
    case realtime
    /// All frames at once.
    case instant
}
