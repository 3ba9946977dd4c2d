// Tonearm's layer over FFmpeg's libraries, built with the FFmpeg package trait
// (`swift build --traits FFmpeg`). Without the trait this module is empty and nothing links
// FFmpeg. With it, the codec registry (TonearmCodecs) and the format registry
// (TonearmFormats) use it at fallback rank, after every native decoder and parser, and the
// `Tonearm` module re-exports it.
