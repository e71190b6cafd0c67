"""Imported last by the pool's fork server (`thresher.run.pool_engine.pool_context`): moves every
object the server's preloads created into the garbage collector's permanent generation.

Why: a forked worker shares the server's pages until it writes to them. CPython's cycle collector
writes into the header of every container object of the generation it collects, so a worker's
full collections touch every preloaded module, function and table, and the kernel copies each
page that holds one. Frozen objects are never collected (they live as long as the process anyway)
and never visited, so their pages stay shared: on a 50k-document build the tree's PSS is 3-4 MiB
lower (the fork server's share 62 -> 60 MiB, each worker's ~0.5 MiB) and the CPU 1-2% lower (the
collector visits less); returning the imports' freed heap first takes another 2-2.7 MiB (the fork
server's share -> 56-57 MiB). Reference counts still copy the pages of objects a worker actually uses;
nothing here avoids that on CPython 3.11."""

from __future__ import annotations

import gc

from thresher.run.heap import trim_heap

gc.collect()  # what the imports left as garbage goes now, not frozen for the life of every worker
trim_heap()  # and the heap it freed goes back to the system, not into every worker as copied pages
gc.freeze()
