# bench/chart.gp — the PNG chart of one benchmark run, drawn by `dblock_bench run` with
#   gnuplot -e "ratios='DIR/bench_ratios.dat'; targets='DIR/bench_targets.dat'; out='DIR/bench.png'; title_text='...'" bench/chart.gp
# Top: each dblock figure divided by its floor measured in the same run (the hand-written
# twin, SELECT 1, the empty table, the naive polling loop: see docs/performance.md).
# Bottom: each target as measured / allowed, so a bar at or under the line is a target met.
set terminal pngcairo size 1400,1000 font "sans,10"
set output out
set datafile missing "NaN"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set grid ytics
set key top right
set xtics rotate by -25 noenhanced
set multiplot layout 2,1 title title_text noenhanced

set title "dblock / floor measured in the same run (median of paired ratios; 1 = as fast as the floor; log scale)"
set ylabel "ratio"
set logscale y
set yrange [0.25:*]
plot ratios using 2:xtic(1) title "PostgreSQL (libpqxx)" lc rgb "#336699", \
     '' using 3 title "MariaDB (Connector/C++)" lc rgb "#cc6633", \
     '' using 4 title "SQLite (SOCI)" lc rgb "#669944", \
     1 with lines dt 2 lc rgb "black" notitle

set title "Targets of issue 7: measured / allowed (at or under the dashed line = met)"
set ylabel "measured / allowed"
unset logscale y
set yrange [0:*]
plot targets using 2:xtic(1) title "PostgreSQL (libpqxx)" lc rgb "#336699", \
     '' using 3 title "MariaDB (Connector/C++)" lc rgb "#cc6633", \
     '' using 4 title "SQLite (SOCI)" lc rgb "#669944", \
     1 with lines dt 2 lc rgb "black" notitle
unset multiplot
