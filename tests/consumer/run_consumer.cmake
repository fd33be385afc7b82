# Installs the build tree into a scratch prefix, then configures, builds and
# runs tests/consumer against it with find_package(memplan CONFIG).
#   WITH_CP=ON:  find_package(memplan COMPONENTS cp), links memplan::cp.
#   WITH_CP=OFF: the core alone, configured with Gecode hidden
#                (CMAKE_DISABLE_FIND_PACKAGE_Gecode), and the program must not
#                load any Gecode library.
#   WITH_CPSAT=ON: find_package(memplan COMPONENTS cpsat), links
#                memplan::cpsat (Gecode hidden); the program loads no
#                OR-tools library at start, only when cpsat first solves.
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
execute_process(COMMAND ${CMAKE_COMMAND} --install "${BINARY_DIR}" --prefix "${prefix}"
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "install failed: ${rc}")
endif()
set(consumer_args -DWITH_CP=${WITH_CP} -DWITH_CPSAT=${WITH_CPSAT})
if(NOT WITH_CP)
  list(APPEND consumer_args -DCMAKE_DISABLE_FIND_PACKAGE_Gecode=TRUE)
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S "${SOURCE_DIR}/tests/consumer" -B "${WORK_DIR}/build"
                -DCMAKE_PREFIX_PATH=${prefix} "-DCMAKE_CXX_FLAGS=${CONSUMER_FLAGS}"
                "-DCMAKE_EXE_LINKER_FLAGS=${CONSUMER_FLAGS}" ${consumer_args}
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "configuring the consumer failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build "${WORK_DIR}/build" RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "building the consumer failed: ${rc}")
endif()
execute_process(COMMAND "${WORK_DIR}/build/consumer" RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "the consumer failed: ${rc}")
endif()
file(GET_RUNTIME_DEPENDENCIES EXECUTABLES "${WORK_DIR}/build/consumer"
     RESOLVED_DEPENDENCIES_VAR libraries)
set(all_libraries ${libraries})
list(FILTER all_libraries INCLUDE REGEX "ortools|protobuf\\.so\\.33")
if(all_libraries)
  message(FATAL_ERROR "the consumer links OR-tools' libraries: ${all_libraries}")
endif()
list(FILTER libraries INCLUDE REGEX "gecode")
if(WITH_CP AND NOT libraries)
  message(FATAL_ERROR "the consumer with cp loads no Gecode library")
elseif(NOT WITH_CP AND libraries)
  message(FATAL_ERROR "the core-only consumer loads Gecode: ${libraries}")
endif()
