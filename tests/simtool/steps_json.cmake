# steps_json.cmake: homa-sim's step patterns on 8 hosts, checking the JSON
# other tools rely on: for the engine and the ideal reference, step_p50_us,
# step_p99_us and idle_fraction, consistent with each other.
#   cmake -DHOMA_SIM=path/to/homa-sim -P steps_json.cmake
foreach(p alltoall-step ring-allreduce lookup-batch)
  execute_process(COMMAND ${HOMA_SIM} --pattern ${p} --hosts 8 --racks 2 --spines 2
                          --steps 4 --size 20000 --compute-us 50 --json --no-timing
                  OUTPUT_VARIABLE json RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "homa-sim --pattern ${p} failed (${rc})")
  endif()
  string(JSON pat GET "${json}" pattern)
  string(JSON left GET "${json}" incomplete_steps)
  if(NOT pat STREQUAL p OR NOT left EQUAL 0)
    message(FATAL_ERROR "${p}: pattern '${pat}', ${left} steps unfinished")
  endif()
  foreach(who engine ideal)
    string(JSON p50 GET "${json}" ${who} step_p50_us)
    string(JSON p99 GET "${json}" ${who} step_p99_us)
    string(JSON idle GET "${json}" ${who} idle_fraction)
    if(p50 LESS_EQUAL 50 OR p99 LESS p50 OR idle LESS_EQUAL 0 OR idle GREATER_EQUAL 1)
      message(FATAL_ERROR "${p} ${who}: step P50 ${p50} P99 ${p99} idle ${idle}")
    endif()
  endforeach()
  string(JSON r GET "${json}" engine_over_ideal step_p99)
  message(STATUS "${p}: engine/ideal step P99 ${r}")
endforeach()
# Beside background bulk traffic: the background's fields, and the same
# step fields for the engine and the ideal.
execute_process(COMMAND ${HOMA_SIM} --pattern lookup-batch --hosts 8 --racks 2 --spines 2
                        --steps 4 --compute-us 50 --background 0.5 --background-size 100000
                        --json --no-timing
                OUTPUT_VARIABLE json RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "homa-sim --background failed (${rc})")
endif()
string(JSON load GET "${json}" background_load)
string(JSON bsize GET "${json}" background_size)
string(JSON sent GET "${json}" background_messages)
string(JSON got GET "${json}" background_delivered)
if(NOT load EQUAL 0.5 OR NOT bsize EQUAL 100000 OR sent LESS 1 OR got GREATER sent)
  message(FATAL_ERROR "background: load ${load} size ${bsize} sent ${sent} delivered ${got}")
endif()
foreach(who engine ideal)
  string(JSON p99 GET "${json}" ${who} step_p99_us)
  string(JSON idle GET "${json}" ${who} idle_fraction)
  if(p99 LESS_EQUAL 50 OR idle LESS_EQUAL 0 OR idle GREATER_EQUAL 1)
    message(FATAL_ERROR "background ${who}: step P99 ${p99} idle ${idle}")
  endif()
endforeach()
message(STATUS "lookup-batch beside background: ${sent} background messages")
