# Writes OUT from cli/build_info.cpp.in with the version and git commit.
# Run at every build (cmake -P); configure_file leaves OUT untouched when
# nothing changed, so a new commit recompiles one small file and relinks.
#   -DSOURCE_DIR=<source tree> -DOUT=<generated .cpp> -DVERSION=<x.y.z>
#   -DCOMMIT=<hash> (optional: overrides git, for builds from a tarball)
set(FAULTLINE_VERSION "${VERSION}")
set(FAULTLINE_COMMIT "${COMMIT}")
if(NOT FAULTLINE_COMMIT)
  set(FAULTLINE_COMMIT "unknown")
  find_program(_git git)
  if(_git)
    # rev-parse only reads the repository: it never takes the index lock.
    # Only the source tree's own repository counts, not one around it.
    execute_process(
      COMMAND "${_git}" -C "${SOURCE_DIR}" rev-parse --show-toplevel
      OUTPUT_VARIABLE _top OUTPUT_STRIP_TRAILING_WHITESPACE
      ERROR_QUIET RESULT_VARIABLE _rc)
    file(REAL_PATH "${SOURCE_DIR}" _src)
    if(_rc EQUAL 0 AND EXISTS "${_top}")
      file(REAL_PATH "${_top}" _top)
    endif()
    if(_rc EQUAL 0 AND _top STREQUAL _src)
      execute_process(
        COMMAND "${_git}" -C "${SOURCE_DIR}" rev-parse --short=12 HEAD
        OUTPUT_VARIABLE _head OUTPUT_STRIP_TRAILING_WHITESPACE
        ERROR_QUIET RESULT_VARIABLE _rc)
      if(_rc EQUAL 0 AND _head MATCHES "^[0-9a-f]+$")
        set(FAULTLINE_COMMIT "${_head}")
      endif()
    endif()
  endif()
endif()
configure_file("${SOURCE_DIR}/cli/build_info.cpp.in" "${OUT}" @ONLY)
