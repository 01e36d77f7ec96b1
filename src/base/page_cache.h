// How much of a file the kernel's page cache holds, and asking it to drop the file: for
// measuring a cold start without root (no drop_caches), as `qvl bench` does.
#pragma once

#include <string>

namespace qvl {

// Fraction (0..1) of the file's pages that are resident in the page cache; 1 for an
// empty file. Throws Error(kNotFound / kIo) naming the path.
double ResidentFraction(const std::string& path);

// Writes back nothing and asks the kernel to evict the file's clean, unmapped pages
// (posix_fadvise DONTNEED). Pages another process maps stay, and filesystems such as
// tmpfs keep everything: check ResidentFraction afterwards. Throws like ResidentFraction.
void DropFromPageCache(const std::string& path);

}  // namespace qvl
