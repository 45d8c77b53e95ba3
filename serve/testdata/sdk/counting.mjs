// A fetch that counts the requests an SDK sends and their statuses, for
// sdk.mjs and clients.mjs: pass it as the client's fetch, print seen.
export const seen = { sent: 0, statuses: {} };
export const counting = async (url, init) => {
  seen.sent++;
  const res = await fetch(url, init);
  seen.statuses[res.status] = (seen.statuses[res.status] || 0) + 1;
  return res;
};
