@_exported import TonearmCore
@_exported import TonearmFormats
@_exported import TonearmCodecs
@_exported import TonearmConvert
@_exported import TonearmPlayback
@_exported import TonearmStreaming
#if FFmpeg
// With the FFmpeg trait: the FFmpeg backend's public API (FFmpegCodecs, FFmpegLog).
@_exported import TonearmFFmpeg
#endif
