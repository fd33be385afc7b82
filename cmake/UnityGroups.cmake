# memplan_unity_groups(TARGET GROUP...): a unity build of TARGET in which each
# GROUP, a space-separated list of its sources (relative to the calling
# directory), is compiled as one translation unit; sources in no group are
# compiled alone. A group's sources share their headers' parsing and the code
# of the templates they use, and must not define the same name in an
# anonymous namespace: a file whose names collide with another's goes into
# another group (or none).
function(memplan_unity_groups target)
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON
                        UNITY_BUILD_MODE GROUP)
  get_target_property(target_sources ${target} SOURCES)
  set(index 0)
  foreach(group IN LISTS ARGN)
    separate_arguments(sources UNIX_COMMAND "${group}")
    foreach(source IN LISTS sources)
      if(NOT source IN_LIST target_sources)
        message(FATAL_ERROR "memplan_unity_groups: ${source} is not a "
                "source of ${target}; list the target's sources as "
                "add_library/add_executable name them")
      endif()
    endforeach()
    set_source_files_properties(${sources} PROPERTIES
                                UNITY_GROUP "${target}_${index}")
    math(EXPR index "${index} + 1")
  endforeach()
endfunction()
