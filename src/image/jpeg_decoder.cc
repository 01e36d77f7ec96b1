// JPEG through libjpeg-turbo with the settings Pillow uses (JDCT_ISLOW, fancy
// upsampling, no scaling), so the pixels are identical to PIL's. Mode mapping follows
// PIL: 1 component -> L, 3 -> RGB, 4 -> CMYK read as inverted (Adobe) CMYK.
//
// libjpeg reports fatal errors through error_exit, which must not return: it longjmps
// back to DecodeJpegSetjmp. That function owns no C++ objects (all state lives in
// JpegJob, owned by the caller), so the jump skips no destructors; the caller's guard
// destroys the libjpeg state on every path.
#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

// jpeglib.h needs FILE and size_t declared first.
#include <jerror.h>
#include <jpeglib.h>

#include "base/error.h"
#include "image/exif_orientation.h"
#include "image/format_decoders.h"
#include "image/pixel_convert.h"

namespace qvl {
namespace {

// Real progressive files use about 10 scans; thousands of tiny scans make decoding
// take minutes, so more than this is refused.
constexpr int kMaxScans = 100;

struct JpegErrorState {
  jpeg_error_mgr mgr;  // first member: libjpeg hands back &mgr as cinfo->err
  jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
  bool truncated;
};

[[noreturn]] void JumpWithMessage(j_common_ptr cinfo, const char* message) {
  auto* state = reinterpret_cast<JpegErrorState*>(cinfo->err);
  std::snprintf(state->message, sizeof(state->message), "%s", message);
  std::longjmp(state->jump, 1);
}

[[noreturn]] void OnError(j_common_ptr cinfo) {
  auto* state = reinterpret_cast<JpegErrorState*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, state->message);
  std::longjmp(state->jump, 1);
}

// Warnings (corrupt bytes that libjpeg skips) are tolerated as Pillow tolerates them,
// except running out of data, which Pillow reports as a truncated file.
void OnMessage(j_common_ptr cinfo, int level) {
  if (level >= 0) return;
  auto* state = reinterpret_cast<JpegErrorState*>(cinfo->err);
  if (cinfo->err->msg_code == JWRN_JPEG_EOF) state->truncated = true;
  cinfo->err->num_warnings++;
}

void OnProgress(j_common_ptr cinfo) {
  auto* dinfo = reinterpret_cast<j_decompress_ptr>(cinfo);
  if (dinfo->input_scan_number > kMaxScans) {
    JumpWithMessage(cinfo, "more than 100 progressive scans");
  }
}

struct JpegJob {
  std::span<const uint8_t> bytes;
  const ImageLimits* limits;
  const std::string* name;
  RgbxImage* out;
  jpeg_decompress_struct cinfo;
  JpegErrorState error;
  jpeg_progress_mgr progress;
  bool created = false;
  int components = 0;
};

// Collects EXIF and XMP the way Pillow's JPEG plugin does: APP1 "Exif\0\0" segments
// concatenated (the first one keeps its prefix), the last XMP segment after its NUL.
int OrientationFromMarkers(const jpeg_decompress_struct& cinfo) {
  static constexpr std::string_view kExif("Exif\0\0", 6);
  static constexpr std::string_view kXmp("http://ns.adobe.com/xap/1.0/\0", 29);
  std::vector<uint8_t> exif;
  std::string_view xmp;
  bool has_xmp = false;
  for (jpeg_saved_marker_ptr m = cinfo.marker_list; m != nullptr; m = m->next) {
    if (m->marker != JPEG_APP0 + 1) continue;
    const std::string_view data(reinterpret_cast<const char*>(m->data), m->data_length);
    if (data.starts_with(kExif)) {
      exif.insert(exif.end(), m->data + (exif.empty() ? 0 : kExif.size()),
                  m->data + m->data_length);
    } else if (data.starts_with(kXmp)) {
      xmp = data.substr(kXmp.size());
      has_xmp = true;
    }
  }
  if (!exif.empty()) {
    if (const auto orientation = ExifOrientation(exif)) return *orientation;
  }
  if (has_xmp) return XmpOrientation(xmp).value_or(1);
  return 1;
}

// Returns false after a libjpeg error (message in job->error.message). May throw the
// size-limit errors, which the caller's guard turns into a clean teardown.
bool DecodeJpegSetjmp(JpegJob* job) {
  jpeg_decompress_struct* cinfo = &job->cinfo;
  if (setjmp(job->error.jump)) return false;
  jpeg_create_decompress(cinfo);
  job->created = true;
  // libjpeg-turbo honours this bound for its whole-image buffers (progressive and
  // multi-scan files); exceeding it is an error, not an allocation.
  cinfo->mem->max_memory_to_use = static_cast<long>(
      std::min<int64_t>(job->limits->max_decoded_pixels * 12 + (int64_t{64} << 20), 1L << 62));
  cinfo->progress = &job->progress;
  jpeg_mem_src(cinfo, job->bytes.data(), job->bytes.size());
  jpeg_save_markers(cinfo, JPEG_APP0 + 1, 0xFFFF);
  jpeg_read_header(cinfo, TRUE);
  job->components = cinfo->num_components;
  CheckDecodedSize(cinfo->image_width, cinfo->image_height, *job->limits, *job->name);
  if (cinfo->num_components == 1 || cinfo->num_components == 3) {
    cinfo->out_color_space = JCS_EXT_RGBX;
  } else if (cinfo->num_components == 4) {
    cinfo->out_color_space = JCS_CMYK;
  } else {
    return true;  // the caller reports the unsupported layout
  }
  cinfo->dct_method = JDCT_ISLOW;
  cinfo->do_fancy_upsampling = TRUE;
  cinfo->scale_num = cinfo->scale_denom = 1;
  job->out->Reset(static_cast<int>(cinfo->image_width), static_cast<int>(cinfo->image_height));
  jpeg_start_decompress(cinfo);
  while (cinfo->output_scanline < cinfo->output_height && !job->error.truncated) {
    JSAMPROW rows[4];
    const int first = static_cast<int>(cinfo->output_scanline);
    const int count = std::min<int>(4, static_cast<int>(cinfo->output_height) - first);
    for (int i = 0; i < count; ++i) rows[i] = job->out->row(first + i);
    jpeg_read_scanlines(cinfo, rows, count);
  }
  return true;
}

struct JpegGuard {
  JpegJob* job;
  ~JpegGuard() {
    if (job->created) jpeg_destroy_decompress(&job->cinfo);
  }
};

}  // namespace

int DecodeJpeg(std::span<const uint8_t> bytes, const ImageLimits& limits, const std::string& name,
               RgbxImage* out) {
  JpegJob job{};
  job.bytes = bytes;
  job.limits = &limits;
  job.name = &name;
  job.out = out;
  job.cinfo.err = jpeg_std_error(&job.error.mgr);
  job.error.mgr.error_exit = OnError;
  job.error.mgr.emit_message = OnMessage;
  job.progress.progress_monitor = OnProgress;
  JpegGuard guard{&job};
  if (!DecodeJpegSetjmp(&job)) {
    if (job.error.truncated) FailTruncated(name, "JPEG");
    FailCorrupt(name, "JPEG", job.error.message);
  }
  if (job.components != 1 && job.components != 3 && job.components != 4) {
    FailCorrupt(name, "JPEG", StrCat(job.components, " colour components (expected 1, 3 or 4)"));
  }
  if (job.error.truncated) FailTruncated(name, "JPEG");
  if (job.components == 4) {
    for (int y = 0; y < out->height(); ++y) InvertedCmykRowToRgbx(out->row(y), out->width());
  }
  return OrientationFromMarkers(job.cinfo);
}

}  // namespace qvl
