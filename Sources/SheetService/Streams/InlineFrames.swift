import SheetPhysics

/// The frames a result carries when the request asked for them (`?frames=FPS`): the animation
/// running after the request, sampled at `fps` from its start.
struct InlineFrames {
    var fps: Int
    var animation: Animation?
}
