"""Directed graphs over nodes 0..n-1 for the passes: a deterministic topological order and
the strongly connected components (loops), both linear in nodes and edges.

Written here rather than taken from networkx, whose import costs more than compiling most
diagrams (networkx is imported only on error paths, to name a cycle's members).
"""
from __future__ import annotations

import heapq


def topological_order(n, edges):
    """Kahn's algorithm over nodes 0..n-1 and (a, b) edges, always taking the lowest-numbered
    ready node (declaration order), so the order is deterministic; None when a cycle remains."""
    succ = [[] for _ in range(n)]
    indegree = [0] * n
    for a, b in edges:
        succ[a].append(b)
        indegree[b] += 1
    ready = [i for i in range(n) if indegree[i] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        i = heapq.heappop(ready)
        order.append(i)
        for j in succ[i]:
            indegree[j] -= 1
            if indegree[j] == 0:
                heapq.heappush(ready, j)
    return order if len(order) == n else None


def strongly_connected_components(succ):
    """The strongly connected components of the graph whose node i has successors succ[i]:
    a list of node lists, each component after every component that reaches it (Tarjan's
    algorithm, with an explicit stack instead of recursion: a chain of 10,000 blocks is
    deeper than Python's recursion limit)."""
    n = len(succ)
    index = [-1] * n  # visiting order, -1 while unvisited
    low = [0] * n
    on_stack = [False] * n
    stack, found = [], []
    counter = 0
    for root in range(n):
        if index[root] != -1:
            continue
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        work = [(root, iter(succ[root]))]
        while work:
            node, successors = work[-1]
            for nxt in successors:
                if index[nxt] == -1:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack[nxt] = True
                    work.append((nxt, iter(succ[nxt])))
                    break
                if on_stack[nxt] and index[nxt] < low[node]:
                    low[node] = index[nxt]
            else:  # every successor seen: node is done
                work.pop()
                if work and low[node] < low[work[-1][0]]:
                    low[work[-1][0]] = low[node]
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack[member] = False
                        component.append(member)
                        if member == node:
                            break
                    found.append(component)
    return found
