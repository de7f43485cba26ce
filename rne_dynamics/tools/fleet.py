"""A fleet's recordings through Dask (``dask.distributed``): ``loads`` and ``identify`` run one task per recording on a
cluster of processes, a local one by default or the existing one at ``--scheduler ADDRESS``.

The workers read the recordings by their absolute paths (on a remote cluster they must see the same files, as
Dask's workers see a shared file system) and send back what the command writes: the files are written here, by the
command's process. A single recording runs in the command's process, without a cluster.
"""
import contextlib
import logging
import os


def use_cluster(paths, scheduler):
    """Whether the recordings go through Dask: several of them, or a scheduler named."""
    return len(paths) > 1 or scheduler is not None


@contextlib.contextmanager
def dask_client(scheduler=None, workers=None, tasks=1):
    """A ``distributed.Client`` of the cluster at ``scheduler`` (``tcp://host:8786``), or of a ``LocalCluster`` of
    ``workers`` processes (default: one per core, at most one per task), one thread each, without a dashboard;
    closed (and the local cluster stopped) on exit."""
    from distributed import Client, LocalCluster

    if scheduler is not None:
        with Client(scheduler, timeout="20s") as client:
            yield client
        return
    workers = workers or max(1, min(tasks, os.cpu_count() or 1))
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=logging.CRITICAL) as cluster, Client(cluster) as client:
        yield client


def as_completed(client, futures):
    """``(index, result)`` of each future as it completes; the first failure cancels the others and is raised (the
    task's own exception: a bad recording's one-line reason)."""
    from distributed import as_completed as completed

    index = {future.key: k for k, future in enumerate(futures)}
    try:
        for future in completed(futures):
            yield index[future.key], future.result()
    except BaseException:
        client.cancel(futures)
        raise
