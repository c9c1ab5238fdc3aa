import Foundation

// Reading JSONSerialization's output in tests without a cast at every use.

/// A number from JSONSerialization's output.
public func num(_ value: Any?) -> Double? {
    switch value {
    case let d as Double: d
    case let i as Int: Double(i)
    case let n as NSNumber: n.doubleValue
    default: nil
    }
}

/// An integer from JSONSerialization's output.
public func int(_ value: Any?) -> Int? {
    guard let d = num(value), d == d.rounded(), abs(d) < 1e15 else { return nil }
    return Int(d)
}

/// A nested object.
public func obj(_ value: Any?) -> [String: Any]? { value as? [String: Any] }

/// `text` as bytes.
public func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
