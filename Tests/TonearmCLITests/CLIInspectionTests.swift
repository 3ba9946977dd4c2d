import XCTest
import Foundation
import TonearmCLI
import Tonearm
import TonearmTestSupport

/// `info` and `packets` on compressed containers, checked against the goldens beside the
/// fixtures (ffprobe's packet table, chapters, tags and pictures, and the encoders' own
/// gapless numbers).
final class CLIInspectionTests: XCTestCase {
    let fixtures = fixturesDirectory + "/"

    /// The golden JSON beside a fixture: `mp4/chapters.m4b` → `mp4/chapters.json`.
    func golden(_ fixture: String) throws -> [String: Any] {
        let base = fixture[..<(fixture.lastIndex(of: ".") ?? fixture.endIndex)]
        let data = try Data(contentsOf: URL(fileURLWithPath: fixtures + base + ".json"))
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any], fixture)
    }

    func infoJSON(_ fixture: String) throws -> [String: Any] {
        let r = tonearm(["info", fixtures + fixture, "--json"])
        XCTAssertEqual(r.code, 0, "\(fixture): \(r.err)")
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any], fixture)
    }

    func packetsJSON(_ fixture: String) throws -> [[String: Int]] {
        let r = tonearm(["packets", fixtures + fixture, "--json"])
        XCTAssertEqual(r.code, 0, "\(fixture): \(r.err)")
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [[String: Int]], fixture)
    }

    /// The first audio track's first edit: its media time in the track's timescale.
    func firstEditMediaTime(_ g: [String: Any]) throws -> (mediaTime: Int, timescale: Int) {
        let boxes = try XCTUnwrap(g["boxes"] as? [String: Any])
        let tracks = try XCTUnwrap(boxes["tracks"] as? [[String: Any]])
        let audio = try XCTUnwrap(tracks.first { $0["handler"] as? String == "soun" })
        let timescale = try XCTUnwrap(audio["timescale"] as? Int)
        let edits = audio["edits"] as? [[String: Any]] ?? []
        return (edits.first?["mediaTime"] as? Int ?? 0, timescale)
    }

    // MARK: info

    func testInfoTrackCount() throws {
        let two = try infoJSON("mp4/two_tracks.mp4")
        XCTAssertEqual(two["trackCount"] as? Int, try golden("mp4/two_tracks.mp4")["audioStreams"] as? Int)
        XCTAssertEqual(two["trackCount"] as? Int, 2)
        XCTAssertTrue(tonearm(["info", fixtures + "mp4/two_tracks.mp4"]).out.contains("\nNum Tracks:     2\n"))
        XCTAssertEqual(try infoJSON("mp4/chapters.m4b")["trackCount"] as? Int, 1)
        XCTAssertEqual(try infoJSON("mpeg/lame_cbr128.mp3")["trackCount"] as? Int, 1)
    }

    /// Every track of a multi-track container is listed, the one read marked: MP4 tracks by
    /// ID (an AAC and an AC-3 track; a book's chapter text track), Ogg streams by serial
    /// number, in the order of their BOS pages as the golden records them.
    func testInfoListsTracks() throws {
        func tracks(_ name: String) throws -> [[String: Any]] { try XCTUnwrap(try infoJSON(name)["tracks"] as? [[String: Any]], name) }
        let two = try tracks("mp4/two_tracks.mp4")
        XCTAssertEqual(two.map { $0["codec"] as? String }, ["mp4a", "ac-3"])
        XCTAssertEqual(two.map { $0["selected"] as? Bool }, [true, false])
        XCTAssertEqual(two.map { $0["channels"] as? Int }, [2, 1])
        XCTAssertEqual(try tracks("mp4/chapters.m4b").map { $0["kind"] as? String }, ["audio", "text"])
        let ogg = try tracks("ogg/multiplexed_theora_vorbis_opus.ogg")
        let bos = try XCTUnwrap(try golden("ogg/multiplexed_theora_vorbis_opus.ogg")["bosPages"] as? [[String: Any]])
        XCTAssertEqual(ogg.map { $0["id"] as? Int }, bos.map { $0["serial"] as? Int })
        XCTAssertEqual(ogg.map { $0["kind"] as? String }, ["video", "audio", "audio"])
        XCTAssertEqual(ogg.map { $0["selected"] as? Bool }, [false, true, false])
        XCTAssertEqual(try tracks("mpeg/lame_cbr128.mp3").count, 0)
        XCTAssertTrue(tonearm(["info", fixtures + "mp4/two_tracks.mp4"]).out.contains("\n  track 2: audio 'ac-3', 1 ch, 48000 Hz"))
    }

    /// The chapters of both chaptered books (moov first and moov last) are ffprobe's.
    func testInfoChaptersEqualTheGolden() throws {
        for name in ["mp4/chapters.m4b", "mp4/chapters_moov_end.m4b"] {
            let expected = try XCTUnwrap(try golden(name)["chapters"] as? [[String: Any]])
            XCTAssertEqual(expected.count, 3)
            let chapters = try XCTUnwrap(try infoJSON(name)["chapters"] as? [[String: Any]], name)
            XCTAssertEqual(chapters.count, expected.count, name)
            for (i, (ours, theirs)) in zip(chapters, expected).enumerated() {
                XCTAssertEqual(ours["index"] as? Int, i)
                XCTAssertEqual(ours["title"] as? String, theirs["title"] as? String, "\(name) chapter \(i)")
                let start = try XCTUnwrap(ours["start"] as? Double), golden = try XCTUnwrap(theirs["start"] as? Double)
                XCTAssertEqual(start, golden, accuracy: 1e-9, "\(name) chapter \(i)")
            }
        }
        let text = tonearm(["info", fixtures + "mp4/chapters.m4b"]).out
        XCTAssertTrue(text.contains("chapters:\n[ 0] 0.000 sec: Opening\n[ 1] 0.400 sec: Middle Part\n[ 2] 1.000 sec: Ende – Schluss\n"), text)
        // A file without chapters says nothing about them in text, and gives [] in JSON.
        XCTAssertFalse(tonearm(["info", fixtures + "mp4/tags_cover.m4a"]).out.contains("chapters:"))
        XCTAssertEqual((try infoJSON("mp4/tags_cover.m4a")["chapters"] as? [Any])?.count, 0)
    }

    /// Valid, priming and remainder frames of compressed formats, from the encoders' numbers.
    func testInfoGaplessFramesOfCompressedFormats() throws {
        func frames(_ j: [String: Any]) -> (valid: Int?, priming: Int?, remainder: Int?) {
            (j["validFrames"] as? Int, j["primingFrames"] as? Int, j["remainderFrames"] as? Int)
        }
        // MP3: LAME's delay and padding from its tag. Apple counts the decoder's own delay
        // of 529 samples into the priming and out of the padding.
        let mp3 = try golden("mpeg/lame_cbr128.mp3"), mp3Expected = try XCTUnwrap(mp3["expected"] as? [String: Any])
        let m = frames(try infoJSON("mpeg/lame_cbr128.mp3"))
        let delay = try XCTUnwrap(mp3Expected["encoderDelay"] as? Int), padding = try XCTUnwrap(mp3Expected["encoderPadding"] as? Int)
        XCTAssertEqual(m.valid, mp3["decodedFrames"] as? Int)
        XCTAssertEqual(m.priming, delay + 529)
        XCTAssertEqual(m.remainder, padding - 529)
        XCTAssertTrue(tonearm(["info", fixtures + "mpeg/lame_cbr128.mp3"]).out
            .contains("audio 44100 valid frames + 1105 priming + 875 remainder = 46080"))

        // AAC in MP4: the edit list's media time is the priming and its duration the valid
        // frames; the remainder fills the last packet.
        for name in ["mp4/chapters.m4b", "mp4/tags_cover.m4a"] {
            let g = try golden(name)
            let f = frames(try infoJSON(name))
            XCTAssertEqual(f.priming, try firstEditMediaTime(g).mediaTime, name)
            XCTAssertEqual(f.valid, g["durationTs"] as? Int, name)
            let packets = try XCTUnwrap(g["packets"] as? Int), perPacket = try XCTUnwrap((g["packetDurations"] as? [Int])?.first)
            XCTAssertEqual((f.valid ?? 0) + (f.priming ?? 0) + (f.remainder ?? 0), packets * perPacket, name)
        }

        // FLAC: no priming; every packet counts as the stream's block size, and the
        // remainder trims the short last block.
        let flac = try golden("flac/flac_tags_picture.flac")
        let fl = frames(try infoJSON("flac/flac_tags_picture.flac"))
        let blocks = try XCTUnwrap(flac["frameSamples"] as? [Int])
        XCTAssertEqual(fl.valid, flac["totalSamples"] as? Int)
        XCTAssertEqual(fl.valid, blocks.reduce(0, +))
        XCTAssertEqual(fl.priming, 0)
        XCTAssertEqual(fl.remainder, blocks.count * blocks[0] - blocks.reduce(0, +))

        // Opus: the header's pre-skip is the priming.
        let opus = try golden("ogg/opus_opusenc_stereo.opus")
        let o = frames(try infoJSON("ogg/opus_opusenc_stereo.opus"))
        XCTAssertEqual(o.valid, opus["validFrames"] as? Int)
        XCTAssertEqual(o.priming, opus["preSkip"] as? Int)
        let opusPackets = try XCTUnwrap(opus["packets"] as? Int), opusPerPacket = try XCTUnwrap((opus["packetDurations"] as? [Int])?.first)
        XCTAssertEqual((o.valid ?? 0) + (o.priming ?? 0) + (o.remainder ?? 0), opusPackets * opusPerPacket)
    }

    /// The info dictionary of compressed formats holds every tag ffprobe reads, under Apple's keys.
    func testInfoDictionaryOfCompressedFormats() throws {
        // ffprobe's MP4 tag names → Apple's kAFInfoDictionary_ keys.
        let mp4Keys = ["title": "title", "artist": "artist", "album": "album", "composer": "composer",
                       "copyright": "copyright", "genre": "genre", "date": "year", "comment": "comments",
                       "encoder": "encoding application", "track": "track number"]
        let tags = try XCTUnwrap(try golden("mp4/tags_cover.m4a")["tags"] as? [String: String])
        let mp4Info = try XCTUnwrap(try infoJSON("mp4/tags_cover.m4a")["info"] as? [String: String])
        XCTAssertEqual(mp4Info.count, mp4Keys.count)
        for (theirs, ours) in mp4Keys { XCTAssertEqual(mp4Info[ours], tags[theirs], theirs) }

        let chapters = try XCTUnwrap(try golden("mp4/chapters.m4b")["tags"] as? [String: String])
        XCTAssertEqual(try infoJSON("mp4/chapters.m4b")["info"] as? [String: String],
                       ["title": try XCTUnwrap(chapters["title"]), "artist": try XCTUnwrap(chapters["artist"])])

        // Vorbis comment names → Apple's keys.
        let vorbisKeys = ["TITLE": "title", "ARTIST": "artist", "ALBUM": "album", "DATE": "year",
                          "TRACKNUMBER": "track number", "COMMENT": "comments"]
        let flacTags = try XCTUnwrap(try golden("flac/flac_tags_picture.flac")["tags"] as? [[String]])
        let flacInfo = try XCTUnwrap(try infoJSON("flac/flac_tags_picture.flac")["info"] as? [String: String])
        XCTAssertEqual(flacInfo.count, flacTags.count)
        for tag in flacTags { XCTAssertEqual(flacInfo[try XCTUnwrap(vorbisKeys[tag[0]])], tag[1], tag[0]) }

        let opusGolden = try XCTUnwrap(try golden("ogg/opus_opusenc_stereo.opus")["info"] as? [String: String])
        let opusInfo = try XCTUnwrap(try infoJSON("ogg/opus_opusenc_stereo.opus")["info"] as? [String: String])
        for (k, v) in opusGolden { XCTAssertEqual(opusInfo[k], v, k) }
        XCTAssertEqual(opusInfo["encoding application"], "opusenc from opus-tools 0.2")

        let text = tonearm(["info", fixtures + "ogg/opus_opusenc_stereo.opus"]).out
        XCTAssertTrue(text.contains("info dictionary:\n"), text)
        XCTAssertTrue(text.contains("\n  title: Ogg Test Tone\n"), text)
    }

    // MARK: artwork

    /// `--artwork OUT` writes exactly the picture the golden hashed; info gives its size and type.
    func testArtworkIsExtractedAndDescribed() throws {
        let dir = makeTemporaryDirectory()
        // (fixture, golden size, golden SHA-256 or picture bytes in hex, golden MIME type)
        var cases: [(String, Int, String, String)] = []
        let cover = try XCTUnwrap(try golden("mp4/tags_cover.m4a")["cover"] as? [String: Any])
        cases.append(("mp4/tags_cover.m4a", try XCTUnwrap(cover["size"] as? Int), try XCTUnwrap(cover["sha256"] as? String),
                      "image/png"))
        let flacPicture = try XCTUnwrap((try golden("flac/flac_tags_picture.flac")["pictures"] as? [[String: Any]])?.first)
        cases.append(("flac/flac_tags_picture.flac", try XCTUnwrap(flacPicture["size"] as? Int),
                      try XCTUnwrap(flacPicture["sha256"] as? String), try XCTUnwrap(flacPicture["mimeType"] as? String)))
        // The Ogg golden keeps the picture's bytes rather than their hash.
        let opusPicture = try XCTUnwrap((try golden("ogg/opus_opusenc_stereo.opus")["pictures"] as? [[String: Any]])?.first)
        let opusBytes = hexBytes(try XCTUnwrap(opusPicture["hex"] as? String))
        cases.append(("ogg/opus_opusenc_stereo.opus", try XCTUnwrap(opusPicture["size"] as? Int), SHA256.hex(opusBytes),
                      try XCTUnwrap(opusPicture["mime"] as? String)))

        for (i, (name, size, sha, mime)) in cases.enumerated() {
            let out = "\(dir)/cover\(i)"
            let r = tonearm(["info", fixtures + name, "--artwork", out])
            XCTAssertEqual(r.code, 0, "\(name): \(r.err)")
            XCTAssertTrue(r.out.contains("\nartwork: \(size) bytes (\(mime))\n"), r.out)
            let written = try readWholeFile(out)
            XCTAssertEqual(written.count, size, name)
            XCTAssertEqual(SHA256.hex(written), sha, name)
            let art = try XCTUnwrap(try infoJSON(name)["artwork"] as? [String: Any], name)
            XCTAssertEqual(art["size"] as? Int, size, name)
            XCTAssertEqual(art["mimeType"] as? String, mime, name)
        }
    }

    func testArtworkMissingIsAnError() throws {
        let dir = makeTemporaryDirectory()
        let out = dir + "/none.jpg"
        let r = tonearm(["info", fixtures + "mpeg/lame_cbr128.mp3", "--artwork", out])
        XCTAssertEqual(r.code, 1)
        XCTAssertEqual(r.err, "tonearm: \(fixtures)mpeg/lame_cbr128.mp3: the file has no artwork to write to \(out) ('pty?')\n")
        XCTAssertFalse(fileExists(out))
        XCTAssertTrue(r.out.contains("File type ID:   MPG3"), "the report is still printed")
        XCTAssertFalse(r.out.contains("artwork:"))
        let json = try infoJSON("mpeg/lame_cbr128.mp3")
        XCTAssertTrue(json["artwork"] is NSNull)
        // One cover, one file.
        XCTAssertEqual(tonearm(["info", fixtures + "mp4/tags_cover.m4a", fixtures + "mp4/chapters.m4b", "--artwork", out]).code, 64)
        XCTAssertEqual(tonearm(["info", fixtures + "mp4/tags_cover.m4a", "--artwork"]).code, 64)
    }

    // MARK: packets

    /// MP4: offsets, sizes and pts are ffprobe's; the pts applies the edit list, so AAC's
    /// priming packet comes at -1024.
    func testPacketsPTSOfMP4() throws {
        let text = tonearm(["packets", fixtures + "mp4/aac_faststart.m4a", "--limit", "2"])
        XCTAssertEqual(text.code, 0, text.err)
        XCTAssertEqual(text.out, "index\toffset\tsize\tframes\tpts\n0\t906\t168\t1024\t-1024\n1\t1074\t236\t1024\t0\n")

        for name in ["mp4/aac_faststart.m4a", "mp4/aac_moov_end.m4a", "mp4/aac_frag.mp4", "mp4/aac_3gpp.3gp",
                     "mp4/chapters.m4b", "mp4/ac3.mp4", "mp4/mp3.mp4", "mp4/opus.mp4", "mp4/alac.m4a", "mp4/flac.mp4"] {
            let g = try golden(name)
            let edit = try firstEditMediaTime(g)
            XCTAssertEqual(edit.timescale, g["sampleRate"] as? Int, "\(name): the media timescale is the sample rate")
            let packets = try packetsJSON(name)
            let pts = packets.compactMap { $0["pts"] }
            XCTAssertEqual(pts.count, packets.count, name)
            XCTAssertEqual(pts, g["packetPts"] as? [Int], name)
            XCTAssertEqual(packets.map { $0["offset"] ?? -1 }, g["packetPos"] as? [Int], name)
            XCTAssertEqual(packets.map { $0["size"] ?? -1 }, g["packetSizes"] as? [Int], name)
        }
    }

    /// Ogg: the pts is the granule position less the pre-skip, as ffprobe gives it. Vorbis's
    /// first packet is the exception: it decodes to nothing, so we give it 0 frames and the
    /// next packet's time, where ffprobe gives it a notional duration before 0.
    func testPacketsPTSOfOgg() throws {
        for name in ["ogg/opus_opusenc_stereo.opus", "ogg/opus_ffmpeg_mono.opus", "ogg/opus_small_pages.opus",
                     "ogg/speex_ffmpeg_mono.spx", "ogg/speex_speexenc_skeleton.spx", "ogg/flac_flac_mono.oga",
                     "ogg/flac_ffmpeg_stereo.oga"] {
            let packets = try packetsJSON(name)
            let pts = packets.compactMap { $0["pts"] }
            XCTAssertEqual(pts.count, packets.count, name)
            XCTAssertEqual(pts, try golden(name)["packetPts"] as? [Int], name)
        }
        for name in ["ogg/vorbis_oggenc_stereo.ogg", "ogg/vorbis_ffmpeg_mono.ogg"] {
            let packets = try packetsJSON(name)
            let pts = try XCTUnwrap(try golden(name)["packetPts"] as? [Int], name)
            XCTAssertEqual(packets.count, pts.count, name)
            XCTAssertEqual(packets.first?["frames"], 0, name)
            XCTAssertEqual(packets.first?["pts"], pts.dropFirst().first, name)
            XCTAssertEqual(packets.dropFirst().compactMap { $0["pts"] }, Array(pts.dropFirst()), name)
        }
        let text = tonearm(["packets", fixtures + "ogg/opus_opusenc_stereo.opus", "--limit", "1"])
        XCTAssertEqual(text.out, "index\toffset\tsize\tframes\tpts\n0\t1168\t306\t960\t-312\n")
    }

    /// Formats without timestamps have no pts column and no "pts" key.
    func testPacketsWithoutTimestamps() throws {
        for name in ["mpeg/lame_cbr128.mp3", "flac/flac_tags_picture.flac"] {
            let g = try golden(name)
            let packets = try packetsJSON(name)
            XCTAssertTrue(packets.allSatisfy { Set($0.keys) == ["index", "offset", "size", "frames"] }, name)
            XCTAssertEqual(packets.map { $0["offset"] ?? -1 }, g["packetOffsets"] as? [Int], name)
            XCTAssertEqual(packets.map { $0["size"] ?? -1 }, g["packetSizes"] as? [Int], name)
            XCTAssertTrue(tonearm(["packets", fixtures + name, "--limit", "1"]).out.hasPrefix("index\toffset\tsize\tframes\n"))
        }
        let mp3 = try golden("mpeg/lame_cbr128.mp3")
        XCTAssertEqual(try packetsJSON("mpeg/lame_cbr128.mp3").count, mp3["packets"] as? Int)
    }

    /// Every compressed fixture gets a report and a packet list, with no error.
    func testInfoAndPacketsReadEveryCompressedFixture() {
        var checked = 0
        for family in ["mpeg", "adts", "ac3", "amr", "mp4", "flac", "ogg", "caf"] {
            for path in fixtureFiles(family) where !path.hasSuffix(".py") {
                checked += 1
                let info = tonearm(["info", path, "--json"])
                XCTAssertEqual(info.code, 0, "\(path): \(info.err)")
                let packets = tonearm(["packets", path, "--limit", "3"])
                XCTAssertEqual(packets.code, 0, "\(path): \(packets.err)")
            }
        }
        XCTAssertGreaterThan(checked, 80, "the fixtures were found")
    }
}

