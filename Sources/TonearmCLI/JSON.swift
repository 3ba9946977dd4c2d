/// A JSON value that keeps its keys in the order given, so `--json` output is stable.
public indirect enum JSON: Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSON])
    case object([(String, JSON)])

    public static func == (a: JSON, b: JSON) -> Bool { a.serialized() == b.serialized() }

    /// Compact (one line) or pretty (two-space indent) text.
    public func serialized(pretty: Bool = false) -> String {
        var out = ""
        write(&out, pretty: pretty, indent: 0)
        return out
    }

    private func write(_ out: inout String, pretty: Bool, indent: Int) {
        let pad = pretty ? String(repeating: "  ", count: indent + 1) : ""
        let closePad = pretty ? String(repeating: "  ", count: indent) : ""
        let nl = pretty ? "\n" : ""
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .double(let d):
            if !d.isFinite { out += "null" }
            else if d == d.rounded(), abs(d) < 1e15 { out += String(Int64(d)) }
            else { out += String(d) }
        case .string(let s): JSON.escape(s, into: &out)
        case .array(let items):
            if items.isEmpty { out += "[]"; return }
            out += "[" + nl
            for (i, item) in items.enumerated() {
                out += pad
                item.write(&out, pretty: pretty, indent: indent + 1)
                if i < items.count - 1 { out += "," }
                out += nl
            }
            out += closePad + "]"
        case .object(let pairs):
            if pairs.isEmpty { out += "{}"; return }
            out += "{" + nl
            for (i, (k, v)) in pairs.enumerated() {
                out += pad
                JSON.escape(k, into: &out)
                out += pretty ? ": " : ":"
                v.write(&out, pretty: pretty, indent: indent + 1)
                if i < pairs.count - 1 { out += "," }
                out += nl
            }
            out += closePad + "}"
        }
    }

    static func escape(_ s: String, into out: inout String) {
        out += "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if u.value < 0x20 {
                    let hex = String(u.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        out += "\""
    }
}
