/// A small command-line parser: flags, options with a value, and positional arguments.
///
/// `-d LEI16`, `--limit 10`, `--limit=10` and `--json` are all understood; `--` ends the
/// options. Unknown options are a usage error (exit 64).
public struct Arguments {
    public struct Spec {
        /// Names of flags without a value, e.g. `["--json", "-v"]`.
        public var flags: Set<String>
        /// Names of options that take a value, e.g. `["-d", "-f", "--limit"]`.
        public var options: Set<String>
        public init(flags: Set<String> = [], options: Set<String> = []) {
            self.flags = flags
            self.options = options
        }
    }

    public private(set) var flags: Set<String> = []
    public private(set) var values: [String: [String]] = [:]
    public private(set) var positionals: [String] = []

    public init(_ args: [String], spec: Spec) throws(UsageError) {
        var i = 0
        var onlyPositionals = false
        while i < args.count {
            let a = args[i]
            i += 1
            if onlyPositionals || a == "-" || !a.hasPrefix("-") {
                positionals.append(a)
                continue
            }
            if a == "--" { onlyPositionals = true; continue }
            var name = a
            var inline: String?
            if a.hasPrefix("--"), let eq = a.firstIndex(of: "=") {
                name = String(a[..<eq])
                inline = String(a[a.index(after: eq)...])
            }
            if spec.flags.contains(name) {
                guard inline == nil else { throw UsageError("\(name) takes no value") }
                flags.insert(name)
            } else if spec.options.contains(name) {
                let value: String
                if let inline { value = inline }
                else {
                    guard i < args.count else { throw UsageError("\(name) needs a value") }
                    value = args[i]
                    i += 1
                }
                values[name, default: []].append(value)
            } else if Double(a) != nil {
                positionals.append(a)  // a negative number
            } else {
                throw UsageError("unknown option \(name)")
            }
        }
    }

    public func has(_ flag: String) -> Bool { flags.contains(flag) }
    /// The last value given for an option.
    public func value(_ name: String) -> String? { values[name]?.last }

    public func int(_ name: String) throws(UsageError) -> Int? {
        guard let v = value(name) else { return nil }
        guard let n = Int(v) else { throw UsageError("\(name) wants a whole number, not '\(v)'") }
        return n
    }
}

/// A mistake on the command line: exit code 64 (EX_USAGE).
public struct UsageError: Error, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
