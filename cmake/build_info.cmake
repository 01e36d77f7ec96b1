# Writes OUT, a header defining QVL_BUILD_INFO as "qvl-" and `git describe --always
# --dirty` of SOURCE_DIR ("qvl-unknown" outside a git checkout or without git).
# src/base runs it at every build, not once at configure time: a build made after new
# commits must name them (/props' build_info, `qvl --version`, bench reports). The file
# is rewritten only when the name changed, so an unchanged tree recompiles nothing.
execute_process(COMMAND git describe --always --dirty
  WORKING_DIRECTORY ${SOURCE_DIR} OUTPUT_VARIABLE describe RESULT_VARIABLE status
  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT status EQUAL 0 OR NOT describe)
  set(describe unknown)
endif()
set(content "#define QVL_BUILD_INFO \"qvl-${describe}\"\n")
set(old "")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT old STREQUAL content)
  file(WRITE ${OUT} "${content}")
endif()
