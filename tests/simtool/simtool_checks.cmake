# simtool_checks.cmake: run homa-sim on 16 hosts and check its report.
#   cmake -DHOMA_SIM=path/to/homa-sim -DWORK=dir -P simtool_checks.cmake
# Checks: determinism (two runs, same seed, byte-identical JSON with
# --no-timing), SRPT ordering (short messages see lower P99 slowdown than long
# ones), load accounting (achieved load within 10% of offered at 50% load, W2),
# the ideal SRPT reference is a lower bound, every message completed, and
# --pcap writes a nanosecond pcap with linktype 101.

set(ARGS --hosts 16 --racks 2 --spines 2 --workload w2 --load 0.5
         --messages 30000 --seed 7 --json --no-timing)

function(run_sim out)
  execute_process(COMMAND ${HOMA_SIM} ${ARGS} ${ARGN}
                  OUTPUT_VARIABLE json RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "homa-sim failed (${rc})")
  endif()
  set(${out} "${json}" PARENT_SCOPE)
endfunction()

macro(fail msg)
  message(FATAL_ERROR "simtool check failed: ${msg}")
endmacro()

run_sim(a)
run_sim(b --pcap ${WORK}/simtool.pcap --pcap-count 50)
if(NOT a STREQUAL b)
  message(FATAL_ERROR "determinism: two runs with seed 7 differ:\n${a}\n---\n${b}")
endif()
if(a MATCHES "wall_seconds|events_per_sec")
  fail("--no-timing left timing fields in")
endif()
run_sim(c --seed 8)
if(a STREQUAL c)
  message(FATAL_ERROR "determinism: seeds 7 and 8 gave the same report")
endif()

string(JSON offered GET "${a}" offered_load)
string(JSON achieved GET "${a}" achieved_load)
string(JSON ideal_ach GET "${a}" ideal_achieved_load)
string(JSON incomplete GET "${a}" incomplete)
string(JSON measured GET "${a}" measured)
string(JSON nb LENGTH "${a}" buckets)
math(EXPR last "${nb} - 1")
string(JSON first_p99 GET "${a}" buckets 0 p99_slowdown)
string(JSON last_p99 GET "${a}" buckets ${last} p99_slowdown)
string(JSON short_p99 GET "${a}" short_half_p99_slowdown)
string(JSON mean GET "${a}" mean_slowdown)
string(JSON ideal_mean GET "${a}" ideal_mean_slowdown)
message(STATUS "offered ${offered} achieved ${achieved} measured ${measured} "
               "p99 first ${first_p99} last ${last_p99} short-half ${short_p99} "
               "mean ${mean} ideal ${ideal_mean}")

if(NOT incomplete EQUAL 0)
  fail("${incomplete} messages never completed")
endif()
if(NOT measured EQUAL 27000)
  fail("measured ${measured} messages, expected 27000")
endif()
if(NOT nb GREATER 5)
  fail("only ${nb} buckets")
endif()
# if() compares LESS/GREATER as floating-point numbers.
if(NOT first_p99 LESS last_p99)
  fail("SRPT ordering: shortest bucket P99 ${first_p99} >= longest ${last_p99}")
endif()
if(NOT short_p99 LESS last_p99)
  fail("SRPT ordering: short-half P99 ${short_p99} >= longest bucket ${last_p99}")
endif()
if(achieved LESS 0.45 OR achieved GREATER 0.55)
  fail("load accounting: achieved ${achieved} vs offered ${offered}")
endif()
# The ideal reference, in the same window, delivers about as much.
string(JSON ratio GET "${a}" achieved_vs_ideal)
if(ratio LESS 0.95 OR ratio GREATER 1.05)
  fail("load accounting: achieved ${achieved} vs ideal ${ideal_ach} (ratio ${ratio})")
endif()
if(ideal_mean GREATER mean OR ideal_mean LESS 1)
  fail("ideal mean slowdown ${ideal_mean} not in [1, engine ${mean}]")
endif()

file(READ ${WORK}/simtool.pcap head LIMIT 24 HEX)
string(SUBSTRING "${head}" 0 8 magic)
string(SUBSTRING "${head}" 40 8 linktype)
if(NOT magic STREQUAL "4d3cb2a1" OR NOT linktype STREQUAL "65000000")
  fail("pcap header: magic ${magic} linktype ${linktype}")
endif()
file(SIZE ${WORK}/simtool.pcap psize)
if(NOT psize GREATER 2000)
  fail("pcap too small (${psize} bytes)")
endif()
message(STATUS "simtool checks passed")
