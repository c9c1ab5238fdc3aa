/// A drag segment on the heap, so that an outcome without one carries a null reference.
final class SegmentBox: Sendable {
    let segment: DragSegment
    init(_ segment: DragSegment) { self.segment = segment }
}
