# Writes faultline's man page and completion scripts from the built binary
# (`faultline --generate man|bash|zsh`, cli/generate.h). Run as a POST_BUILD
# step of the faultline target:
#   cmake -DFAULTLINE=<binary> -DOUT_DIR=<build dir> -P generate_docs.cmake
# Writes OUT_DIR/man/faultline.1, OUT_DIR/completion/faultline.bash and
# OUT_DIR/completion/_faultline. When the binary cannot run here (e.g. a
# cross build) it says so and the build goes on without them.
set(_outputs "man/faultline.1:man" "completion/faultline.bash:bash"
             "completion/_faultline:zsh")
foreach(_item ${_outputs})
  string(REPLACE ":" ";" _pair "${_item}")
  list(GET _pair 0 _file)
  list(GET _pair 1 _what)
  get_filename_component(_dir "${OUT_DIR}/${_file}" DIRECTORY)
  file(MAKE_DIRECTORY "${_dir}")
  execute_process(
    COMMAND "${FAULTLINE}" --generate ${_what}
    OUTPUT_FILE "${OUT_DIR}/${_file}.tmp"
    RESULT_VARIABLE _rc
    ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 0)
    file(REMOVE "${OUT_DIR}/${_file}.tmp")
    message(WARNING
      "faultline: could not generate ${_file} (${FAULTLINE} --generate "
      "${_what}: ${_rc} ${_err}); the build goes on without it")
    continue()
  endif()
  file(RENAME "${OUT_DIR}/${_file}.tmp" "${OUT_DIR}/${_file}")
endforeach()
