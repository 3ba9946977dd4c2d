// The parts of FFmpeg's C API that Tonearm's FFmpeg backend uses, and small inline helpers
// for what Swift cannot import: function-like macros (AVERROR, MKTAG) and the 64-bit
// constant AV_NOPTS_VALUE.
#ifndef TONEARM_CFFMPEG_SHIM_H
#define TONEARM_CFFMPEG_SHIM_H

#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#include <libavutil/log.h>
#include <libavutil/mem.h>
#include <libavutil/opt.h>
#include <libswresample/swresample.h>

static inline int tonearm_averror(int posixError) { return AVERROR(posixError); }
static inline int tonearm_averror_eof(void) { return AVERROR_EOF; }
static inline int tonearm_averror_invaliddata(void) { return AVERROR_INVALIDDATA; }
static inline int tonearm_averror_exit(void) { return AVERROR_EXIT; }
static inline int64_t tonearm_nopts(void) { return AV_NOPTS_VALUE; }

#endif
