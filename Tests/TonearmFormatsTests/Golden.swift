import Foundation
import TonearmTestSupport

/// A fixture's golden JSON: oracle values from ffprobe and ffmpeg, written by make-fixtures.sh.
struct Golden {
    let raw: [String: Any]
    init?(fixture path: String) {
        let jsonPath = (path as NSString).deletingPathExtension + ".json"
        guard let data = FileManager.default.contents(atPath: jsonPath),
              let obj = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
        raw = obj
    }
    var sampleRate: Int { raw["sampleRate"] as! Int }
    var channels: Int { raw["channels"] as! Int }
    var frames: Int { raw["frames"] as! Int }
    var s16leSHA256: String? { raw["s16leSHA256"] as? String }
    var f32leSHA256: String? { raw["f32leSHA256"] as? String }
    var header: [String: Any] { raw["header"] as? [String: Any] ?? [:] }
    var dataOffset: Int? { header["dataOffset"] as? Int }
    var dataSize: Int? { header["dataSize"] as? Int }
    var expected: [String: Any] { raw["expected"] as? [String: Any] ?? [:] }
    var fileType: String? { expected["fileType"] as? String }
    var formatID: String? { expected["formatID"] as? String }
    var info: [String: String]? { raw["info"] as? [String: String] ?? expected["info"] as? [String: String] }
    var channelLayoutMask: Int? { raw["channelLayoutMask"] as? Int ?? expected["channelLayoutMask"] as? Int }
}
