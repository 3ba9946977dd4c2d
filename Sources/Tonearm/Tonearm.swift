@_exported import TonearmCore
@_exported import TonearmFormats
@_exported import TonearmCodecs
@_exported import TonearmConvert
@_exported import TonearmPlayback
@_exported import TonearmStreaming
