set terminal pngcairo size 1500,900 font ",10"
set output OUT."/p99_slowdown.png"
set multiplot layout 2,3 title "homa-sim: P99 slowdown by message size, 80% load, 144 hosts (10/40 Gbit/s)"
set logscale x
set xlabel "message size (bytes, bucket upper bound)"
set ylabel "P99 slowdown"
set key top left
set grid
do for [w in WORKLOADS] {
  f = OUT."/".w.".dat"
  set title w
  plot f using 1:3 with linespoints title "classic", \
       f using 1:5 with linespoints title "START\\_MSG", \
       f using 1:7 with linespoints dashtype 2 title "ideal SRPT"
}
unset multiplot
