import TonearmCore

/// Where the channel elements of a frame go: the elements a channel configuration
/// (Table 1.19) or a program_config_element lists, in output order, and the channel labels
/// that follow from them.
struct AACChannelMap {
    enum Kind: Int { case single = 0, pair = 1, lfe = 3 }
    struct Slot {
        var kind: Kind
        /// The first output channel of the element.
        var channel: Int
    }
    /// The slots in output order.
    let slots: [Slot]
    let channels: Int
    let labels: [ChannelLabel]

    init(kinds: [Kind], labels: [ChannelLabel]) {
        var slots: [Slot] = []
        var channel = 0
        for k in kinds {
            slots.append(Slot(kind: k, channel: channel))
            channel += k == .pair ? 2 : 1
        }
        self.slots = slots
        channels = channel
        self.labels = labels
    }

    /// The output channels of the `occurrence`-th element of `kind` in a frame, or nil when
    /// the configuration has no such element (its data is decoded and dropped).
    func slot(_ kind: Kind, occurrence: Int) -> Slot? {
        var n = 0
        for i in slots.indices where slots[i].kind == kind {  // an index loop: a debug build's iterator allocates
            if n == occurrence { return slots[i] }
            n += 1
        }
        return nil
    }

    /// Channel configurations 1–7 (Table 1.19), in AAC's order: C first, then the pairs
    /// from the front outwards, the LFE last.
    static func configuration(_ c: Int) -> AACChannelMap? {
        let cc = ChannelLabel.center, l = ChannelLabel.left, r = ChannelLabel.right
        let ls = ChannelLabel.leftSurround, rs = ChannelLabel.rightSurround, lfe = ChannelLabel.lfeScreen
        switch c {
        case 1: return AACChannelMap(kinds: [.single], labels: [.mono])
        case 2: return AACChannelMap(kinds: [.pair], labels: [l, r])
        case 3: return AACChannelMap(kinds: [.single, .pair], labels: [cc, l, r])
        case 4: return AACChannelMap(kinds: [.single, .pair, .single], labels: [cc, l, r, .centerSurround])
        case 5: return AACChannelMap(kinds: [.single, .pair, .pair], labels: [cc, l, r, ls, rs])
        case 6: return AACChannelMap(kinds: [.single, .pair, .pair, .lfe], labels: [cc, l, r, ls, rs, lfe])
        case 7:
            return AACChannelMap(kinds: [.single, .pair, .pair, .pair, .lfe],
                                 labels: [cc, .leftCenter, .rightCenter, l, r, ls, rs, lfe])
        default: return nil
        }
    }

    /// A program's elements: front ones from the centre outwards (a pair nearest
    /// the centre is Lc Rc when another pair follows), then the side, back and LFE ones.
    init(program p: AACProgramConfig) {
        var kinds: [Kind] = [], labels: [ChannelLabel] = []
        let frontPairs = p.front.filter(\.isPair).count
        var pairIndex = 0
        for e in p.front {
            if e.isPair {
                kinds.append(.pair)
                labels += frontPairs - pairIndex >= 2 ? [.leftCenter, .rightCenter] : [.left, .right]
                pairIndex += 1
            } else {
                kinds.append(.single)
                labels.append(.center)
            }
        }
        for e in p.side {
            kinds.append(e.isPair ? .pair : .single)
            labels += e.isPair ? [.leftSurroundDirect, .rightSurroundDirect] : [.centerSurround]
        }
        for e in p.back {
            kinds.append(e.isPair ? .pair : .single)
            labels += e.isPair ? [.leftSurround, .rightSurround] : [.centerSurround]
        }
        for _ in p.lfe {
            kinds.append(.lfe)
            labels.append(.lfeScreen)
        }
        self.init(kinds: kinds, labels: labels)
    }

    /// Apple's layout: a named tag where one has exactly these channels in this order.
    var layout: ChannelLayout {
        switch labels {
        case [.mono]: return ChannelLayout(tag: .mono)
        case [.left, .right]: return ChannelLayout(tag: .stereo)
        case [.center, .left, .right]: return ChannelLayout(tag: .mpeg3_0_B)
        case [.center, .left, .right, .centerSurround]: return ChannelLayout(tag: .mpeg4_0_B)
        case [.center, .left, .right, .leftSurround, .rightSurround]: return ChannelLayout(tag: .mpeg5_0_D)
        case [.center, .left, .right, .leftSurround, .rightSurround, .lfeScreen]: return ChannelLayout(tag: .mpeg5_1_D)
        case [.center, .leftCenter, .rightCenter, .left, .right, .leftSurround, .rightSurround, .lfeScreen]:
            return ChannelLayout(tag: .aac7_1)
        default: return ChannelLayout(labels: labels)
        }
    }
}
