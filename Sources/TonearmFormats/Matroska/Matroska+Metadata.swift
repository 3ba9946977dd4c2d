import TonearmCore

/// Info, Tags, Chapters and Attachments (RFC 9559 §5.1.2, §5.1.8, §5.1.7, §5.1.6).
enum MatroskaMetadata {
    /// Segment Info: the timestamp scale (ns per tick), the duration in ticks, the title and
    /// the muxing application.
    struct Info {
        var timestampScale: UInt64 = 1_000_000
        var duration: Double?
        var title: String?
        var muxingApp: String?
    }

    static func info(_ b: [UInt8], _ range: Range<Int>) -> Info {
        var i = Info()
        for (id, body) in EBML.children(b, range) {
            switch id {
            case MKV.timestampScale:
                if let s = EBML.uint(b[body]), s > 0, s <= 1 << 40 { i.timestampScale = s }
            case MKV.duration:
                if let d = EBML.float(b[body]), d.isFinite, d >= 0 { i.duration = d }
            case MKV.title: i.title = EBML.string(b[body])
            case MKV.muxingApp: i.muxingApp = EBML.string(b[body])
            default: break
            }
        }
        return i
    }

    /// The tags that apply to the whole file, or to the selected track, as Apple's info
    /// dictionary keys (``InfoDictionary/key(forContainerTag:)``): a Tag whose Targets name
    /// no track, edition, chapter or attachment, or name the track's UID. Whole-file tags
    /// win over the track's. Nested SimpleTags are not read (they qualify their parent).
    static func tags(_ b: [UInt8], _ range: Range<Int>, trackUID: UInt64, into info: inout InfoDictionary) {
        var global: [(String, String)] = [], track: [(String, String)] = []
        for tag in EBML.children(b, range) where tag.id == MKV.tag {
            let c = EBML.children(b, tag.body)
            var isGlobal = true, isTrack = false
            if let targets = EBML.child(MKV.targets, in: c) {
                for (id, body) in EBML.children(b, targets) {
                    switch id {
                    case MKV.tagTrackUID:
                        let uid = EBML.uint(b[body]) ?? 0
                        if uid != 0 { isGlobal = false; if uid == trackUID { isTrack = true } }
                    case MKV.tagEditionUID, MKV.tagChapterUID, MKV.tagAttachmentUID:
                        if (EBML.uint(b[body]) ?? 0) != 0 { isGlobal = false }
                    default: break
                    }
                }
            }
            guard isGlobal || isTrack else { continue }
            for (id, body) in c where id == MKV.simpleTag {
                let s = EBML.children(b, body)
                guard let n = EBML.child(MKV.tagName, in: s), let v = EBML.child(MKV.tagString, in: s) else { continue }
                let name = EBML.string(b[n]), value = EBML.string(b[v])
                guard !name.isEmpty else { continue }
                if isGlobal { global.append((name, value)) } else { track.append((name, value)) }
            }
        }
        for (name, value) in global { info[InfoDictionary.key(forContainerTag: name)] = value }
        for (name, value) in track where name.uppercased() != "DURATION" {
            let key = InfoDictionary.key(forContainerTag: name)
            if info[key] == nil { info[key] = value }
        }
    }

    /// The chapters of the default edition (else the first): each top-level ChapterAtom that
    /// is not hidden, with its start in seconds and its first ChapString.
    static func chapters(_ b: [UInt8], _ range: Range<Int>) -> [Chapter] {
        let editions = EBML.children(b, range).filter { $0.id == MKV.editionEntry }
        guard !editions.isEmpty else { return [] }
        let edition = editions.first { e in
            EBML.child(MKV.editionFlagDefault, in: EBML.children(b, e.body)).flatMap { EBML.uint(b[$0]) } == 1
        } ?? editions[0]
        var out: [Chapter] = []
        for atom in EBML.children(b, edition.body) where atom.id == MKV.chapterAtom {
            let c = EBML.children(b, atom.body)
            if EBML.child(MKV.chapterFlagHidden, in: c).flatMap({ EBML.uint(b[$0]) }) == 1 { continue }
            let start = EBML.child(MKV.chapterTimeStart, in: c).flatMap { EBML.uint(b[$0]) } ?? 0
            var title = ""
            if let display = EBML.child(MKV.chapterDisplay, in: c),
               let s = EBML.child(MKV.chapString, in: EBML.children(b, display))
            {
                title = EBML.string(b[s])
            }
            out.append(Chapter(start: Double(start) / 1e9, title: title))
        }
        return out.sorted { $0.start < $1.start }
    }

    /// The cover among the attached files: an image whose name begins with "cover" (the
    /// Matroska cover art convention), else the first image.
    static func artwork(_ b: [UInt8], _ range: Range<Int>) -> [UInt8]? {
        var images: [(name: String, data: Range<Int>)] = []
        for file in EBML.children(b, range) where file.id == MKV.attachedFile {
            let c = EBML.children(b, file.body)
            guard let type = EBML.child(MKV.fileMediaType, in: c), EBML.string(b[type]).lowercased().hasPrefix("image/"),
                  let data = EBML.child(MKV.fileData, in: c) else { continue }
            let name = EBML.child(MKV.fileName, in: c).map { EBML.string(b[$0]).lowercased() } ?? ""
            images.append((name, data))
        }
        guard let chosen = images.first(where: { $0.name.hasPrefix("cover") }) ?? images.first else { return nil }
        return Array(b[chosen.data])
    }
}
