/*
** bm25_topk(table, k, w0, w1, ...): FTS5's bm25(table, w0, w1, ...) for a
** query that keeps only the k best rows (ORDER BY it LIMIT k).
**
** A row's score is computed exactly as sqlite3's fts5Bm25Function does
** (same formula, same order of operations, so the same double). What it
** saves: once k rows are scored, a row whose score cannot reach the k-th
** best so far is not scored, and returns 0.0, worse than every score
** (scores are negative, lower is better). Its bound is the score it would
** have at a length of 0 tokens: BM25 falls as a row grows, so no row scores
** past it. The bound needs only the row's phrase frequencies, not its
** length, which FTS5 reads from the %_docsize table with a statement per
** row: most of bm25's time in an OR query of a common word.
**
** The k best are a heap of the scores returned so far. That is exact only
** when every row the function sees is a row the query may return: no
** filter after the full-text match (a join on another table), no offset,
** and k the query's LIMIT. k = 0 turns the pruning off, as do a k past
** maxTopk (the heap's memory) and a negative weight (BM25 no longer falls
** with the row's length). Written twice in one query, the calls share one
** heap: write it once.
*/
#include <math.h>
#include <string.h>

#include "fts5.h"

typedef struct TopkData TopkData;
struct TopkData {
  int nPhrase;  /* phrases in the query */
  double avgdl; /* average tokens a row */
  double *aIDF; /* IDF of each phrase */
  double *aFreq;/* the current row's weighted frequency of each phrase */
  int k;        /* rows kept; 0: no pruning */
  int nHeap;    /* scores in aHeap */
  double *aHeap;/* min-heap of the best k scores (as positive numbers) */
  int bLast;    /* a row was scored: */
  sqlite3_int64 iLast; /* its rowid, */
  double last;  /* and what was returned for it */
};

static int topkCountCb(const Fts5ExtensionApi *pApi, Fts5Context *pFts, void *pUserData){
  (void)pApi; (void)pFts;
  (*(sqlite3_int64*)pUserData)++;
  return SQLITE_OK;
}

/* topkGetData is fts5Bm25GetData with the heap added. */
static int topkGetData(const Fts5ExtensionApi *pApi, Fts5Context *pFts, int k, TopkData **ppData){
  int rc = SQLITE_OK;
  TopkData *p = (TopkData*)pApi->xGetAuxdata(pFts, 0);
  if( p==0 ){
    sqlite3_int64 nRow = 0, nToken = 0;
    int nPhrase = pApi->xPhraseCount(pFts);
    int i;
    p = (TopkData*)sqlite3_malloc64(sizeof(TopkData) + (2*(sqlite3_int64)nPhrase + k)*sizeof(double));
    if( p==0 ) return SQLITE_NOMEM;
    memset(p, 0, sizeof(TopkData) + (2*(sqlite3_int64)nPhrase + k)*sizeof(double));
    p->nPhrase = nPhrase;
    p->aIDF = (double*)&p[1];
    p->aFreq = &p->aIDF[nPhrase];
    p->aHeap = &p->aFreq[nPhrase];
    p->k = k;
    rc = pApi->xRowCount(pFts, &nRow);
    if( rc==SQLITE_OK ) rc = pApi->xColumnTotalSize(pFts, -1, &nToken);
    if( rc==SQLITE_OK ) p->avgdl = (double)nToken / (double)nRow;
    for(i=0; rc==SQLITE_OK && i<nPhrase; i++){
      sqlite3_int64 nHit = 0;
      rc = pApi->xQueryPhrase(pFts, i, (void*)&nHit, topkCountCb);
      if( rc==SQLITE_OK ){
        double idf = log( (nRow - nHit + 0.5) / (nHit + 0.5) );
        if( idf<=0.0 ) idf = 1e-6;
        p->aIDF[i] = idf;
      }
    }
    if( rc==SQLITE_OK ) rc = pApi->xSetAuxdata(pFts, p, sqlite3_free);
    else sqlite3_free(p);
    if( rc!=SQLITE_OK ) p = 0;
  }
  *ppData = p;
  return rc;
}

/* heapPush keeps the k largest scores in p->aHeap, the smallest at 0. */
static void heapPush(TopkData *p, double s){
  double *h = p->aHeap;
  int i;
  if( p->nHeap<p->k ){
    i = p->nHeap++;
    while( i>0 && h[(i-1)/2]>s ){ h[i] = h[(i-1)/2]; i = (i-1)/2; }
    h[i] = s;
    return;
  }
  if( s<=h[0] ) return;
  i = 0;
  for(;;){
    int c = 2*i+1;
    if( c>=p->k ) break;
    if( c+1<p->k && h[c+1]<h[c] ) c++;
    if( h[c]>=s ) break;
    h[i] = h[c]; i = c;
  }
  h[i] = s;
}

/* maxTopk is the largest k pruned with (a heap of 800 KB). */
static const sqlite3_int64 maxTopk = 100000;

/* pruneMargin keeps a row whose bound is within rounding of the k-th
** score: only rows sure to rank below it are skipped. */
static const double pruneMargin = 1e-9;

/* topkResult returns v for the current row and remembers it. */
static void topkResult(const Fts5ExtensionApi *pApi, Fts5Context *pFts, sqlite3_context *pCtx, TopkData *p, double v){
  p->bLast = 1;
  p->iLast = pApi->xRowid(pFts);
  p->last = v;
  sqlite3_result_double(pCtx, v);
}

static void bm25TopkFunction(
  const Fts5ExtensionApi *pApi, Fts5Context *pFts, sqlite3_context *pCtx,
  int nVal, sqlite3_value **apVal
){
  const double k1 = 1.2;
  const double b = 0.75;
  int rc, i, nInst = 0;
  double score = 0.0, D = 0.0;
  TopkData *p;
  sqlite3_int64 k;
  int j;

  if( nVal<1 ){
    sqlite3_result_error(pCtx, "bm25_topk: the number of rows kept is missing", -1);
    return;
  }
  k = sqlite3_value_int64(apVal[0]);
  if( k<0 ){
    sqlite3_result_error(pCtx, "bm25_topk: the number of rows kept is negative", -1);
    return;
  }
  if( k>maxTopk ) k = 0;
  for(j=1; j<nVal; j++){
    if( sqlite3_value_double(apVal[j])<0.0 ) k = 0;
  }
  rc = topkGetData(pApi, pFts, (int)k, &p);
  if( rc==SQLITE_OK && p->bLast && p->iLast==pApi->xRowid(pFts) ){
    /* The same row again (the expression written twice in the query):
    ** the same answer, and the heap holds it once. */
    sqlite3_result_double(pCtx, p->last);
    return;
  }
  if( rc==SQLITE_OK ){
    memset(p->aFreq, 0, sizeof(double) * p->nPhrase);
    rc = pApi->xInstCount(pFts, &nInst);
  }
  for(i=0; rc==SQLITE_OK && i<nInst; i++){
    int ip, ic, io;
    rc = pApi->xInst(pFts, i, &ip, &ic, &io);
    if( rc==SQLITE_OK ){
      double w = (nVal-1 > ic) ? sqlite3_value_double(apVal[1+ic]) : 1.0;
      p->aFreq[ip] += w;
    }
  }
  if( rc==SQLITE_OK && p->k>0 && p->nHeap==p->k ){
    double bound = 0.0;
    for(i=0; i<p->nPhrase; i++){
      bound += p->aIDF[i] * ( (p->aFreq[i] * (k1 + 1.0)) / (p->aFreq[i] + k1 * (1 - b)) );
    }
    if( bound < p->aHeap[0] * (1.0 - pruneMargin) ){
      topkResult(pApi, pFts, pCtx, p, 0.0);
      return;
    }
  }
  if( rc==SQLITE_OK ){
    int nTok;
    rc = pApi->xColumnSize(pFts, -1, &nTok);
    D = (double)nTok;
  }
  if( rc==SQLITE_OK ){
    for(i=0; i<p->nPhrase; i++){
      score += p->aIDF[i] * (
          ( p->aFreq[i] * (k1 + 1.0) ) /
          ( p->aFreq[i] + k1 * (1 - b + b * D / p->avgdl) )
      );
    }
    if( p->k>0 ) heapPush(p, score);
    topkResult(pApi, pFts, pCtx, p, -1.0 * score);
  }else{
    sqlite3_result_error_code(pCtx, rc);
  }
}

/* memhostFtsrankInit registers bm25_topk on a new connection (an
** sqlite3_auto_extension entry point). */
int memhostFtsrankInit(sqlite3 *db, char **pzErrMsg, const sqlite3_api_routines *pThunk){
  fts5_api *pApi = 0;
  sqlite3_stmt *pStmt = 0;
  int rc;
  (void)pThunk;
  /* A build without FTS5 opens its databases as before: the index says
  ** what it lacks (index.ErrNoFTS5). */
  if( !sqlite3_compileoption_used("ENABLE_FTS5") ) return SQLITE_OK;
  /* Preparing reads the schema, which waits out a writer's lock or a
  ** crashed writer's recovery as every statement on the connection does:
  ** go-sqlite3 sets its busy timeout (5 s by default) only after the
  ** automatic extensions, so this sets the same one first. */
  sqlite3_busy_timeout(db, 5000);
  rc = sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &pStmt, 0);
  if( rc==SQLITE_OK ){
    sqlite3_bind_pointer(pStmt, 1, (void*)&pApi, "fts5_api_ptr", 0);
    sqlite3_step(pStmt);
    rc = sqlite3_finalize(pStmt);
  }
  if( rc==SQLITE_OK && (pApi==0 || pApi->iVersion<2) ) rc = SQLITE_ERROR;
  if( rc==SQLITE_OK ) rc = pApi->xCreateFunction(pApi, "bm25_topk", 0, bm25TopkFunction, 0);
  if( rc!=SQLITE_OK && pzErrMsg ){
    *pzErrMsg = sqlite3_mprintf("bm25_topk: %s (%d)", sqlite3_errmsg(db), rc);
  }
  return rc;
}
