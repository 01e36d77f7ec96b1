# ctest build_info_script_test: cmake/build_info.cmake names the tree's commit, replaces
# a stale name (a build configured before later commits) and leaves a current file
# untouched (its time kept, so nothing recompiles). Run with -DSOURCE_DIR and -DWORK.
set(script ${SOURCE_DIR}/cmake/build_info.cmake)
set(out ${WORK}/build_info_name.h)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

execute_process(COMMAND git describe --always --dirty WORKING_DIRECTORY ${SOURCE_DIR}
  OUTPUT_VARIABLE describe RESULT_VARIABLE status OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT status EQUAL 0 OR NOT describe)
  set(describe unknown)
endif()
set(expected "#define QVL_BUILD_INFO \"qvl-${describe}\"\n")

function(generate)
  execute_process(COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${SOURCE_DIR} -DOUT=${out} -P ${script}
    RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "build_info.cmake failed: ${status}")
  endif()
endfunction()

function(expect_content what)
  file(READ ${out} got)
  if(NOT got STREQUAL expected)
    message(FATAL_ERROR "${what}: expected '${expected}', got '${got}'")
  endif()
endfunction()

generate()
expect_content("a new file")

file(WRITE ${out} "#define QVL_BUILD_INFO \"qvl-0000000\"\n")
generate()
expect_content("a stale name")

execute_process(COMMAND touch -d "2001-02-03 04:05:06" ${out})
generate()
expect_content("a current name")
file(TIMESTAMP ${out} stamp "%Y-%m-%d %H:%M:%S")
if(NOT stamp STREQUAL "2001-02-03 04:05:06")
  message(FATAL_ERROR "a current name was rewritten (time ${stamp}): every build would recompile")
endif()
