"""Certified SVMs on a Dask cluster: row partitions kept on the workers (:mod:`.data`) and the distributed
backends built on them (``dask-ipm`` in :mod:`.ipm`, ``dask-cocoa`` in :mod:`.cocoa`)."""
