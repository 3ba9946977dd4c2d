import Tonearm

/// `tonearm packets FILE`: one row per packet.
enum PacketsCommand {
    static let help = """
        usage: tonearm packets FILE|URL [--json] [--limit N] [--count]

        Lists the packets of the audio data: index, absolute byte offset, size in bytes
        and frames, and for MP4 and Ogg the presentation time (pts) in frames, where 0
        is the first frame played: MP4 applies the edit list, Ogg subtracts the Opus
        pre-skip, so priming packets have negative times (as ffprobe shows them).
        A URL is read with Range requests (its server must serve them).

          --json      print a JSON array of {index, offset, size, frames[, pts]}
          --limit N   stop after N packets
          --count     print only the number of packets
        """

    static func run(_ args: [String], console: Console) throws -> Int32 {
        guard let a = try parse(args, spec: .init(flags: ["--json", "--count"], options: ["--limit"]), help: help,
                                console: console) else { return 0 }
        guard a.positionals.count == 1, let path = a.positionals.first else { throw UsageError("packets needs one FILE") }
        let limit = try a.int("--limit")
        if let limit, limit < 0 { throw UsageError("--limit must not be negative") }
        let p = try about(path) { () throws(AudioError) in try openAudioFile(path).properties }
        guard let f = p.dataFormat, let dataOffset = p.dataOffset, let total = p.audioDataPacketCount else {
            throw FileError(path: path, error: AudioError(.valueUnknown, "the packet count is not known"))
        }
        if a.has("--count") {
            console.print(a.has("--json") ? JSON.object([("packets", .int(total))]).serialized() : String(total))
            return 0
        }
        let n = Int(min(total, Int64(limit ?? Int.max)))
        let json = a.has("--json")
        let timestamps = p.packetTimestamps
        if json {
            console.print("[")
        } else {
            console.print(timestamps == nil ? "index\toffset\tsize\tframes" : "index\toffset\tsize\tframes\tpts")
        }
        var line = ""
        for i in 0..<n {
            let offset: Int64, size: Int64, frames: Int64
            if f.bytesPerPacket > 0 {
                offset = dataOffset + Int64(i) * Int64(f.bytesPerPacket)
                size = Int64(f.bytesPerPacket)
                frames = Int64(f.framesPerPacket)
            } else if let table = p.packetTable, i < table.count {
                offset = dataOffset + table[i].startOffset
                size = Int64(table[i].dataByteSize)
                frames = table[i].variableFramesInPacket > 0 ? Int64(table[i].variableFramesInPacket) : Int64(f.framesPerPacket)
            } else {
                throw FileError(path: path, error: AudioError(.valueUnknown, "packet \(i) has no description"))
            }
            // A table shorter than the packets (never from a well-formed file) gives no time.
            let pts: String? = timestamps.map { i < $0.count ? String($0[i]) : "null" }
            line.removeAll(keepingCapacity: true)
            if json {
                line += "  {\"index\":\(i),\"offset\":\(offset),\"size\":\(size),\"frames\":\(frames)"
                if let pts { line += ",\"pts\":\(pts)" }
                line += i < n - 1 ? "}," : "}"
            } else {
                line += "\(i)\t\(offset)\t\(size)\t\(frames)"
                if let pts { line += "\t\(pts == "null" ? "-" : pts)" }
            }
            console.print(line)
        }
        if json { console.print("]") }
        return 0
    }
}
