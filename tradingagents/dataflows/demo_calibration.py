"""What the demo market's company figures are calibrated to: real approximate sizes, 2023-2026 (a data table).

The demo market's prices and headlines are synthetic, but a committee checks a company's size first:
NVIDIA's quarterly revenue, Apple's growth, Toyota's leverage. For the companies below, the demo
market's fundamentals and statements follow this table (within ``TOLERANCE``) instead of being
derived from the price path. Figures are approximate public figures from memory of the companies'
reports, rounded, mapped onto calendar years and quarters (a fiscal quarter ending in April counts
as the calendar quarter ending in March; a fiscal year as the calendar year it mostly covers); 2026
and the latest quarters are extrapolations of the reported trend, not reported figures. They give
the order of magnitude; they are not a data source, and every figure the demo market shows stays
labelled "synthetic demo data".

Every listed stock of ``demo_identities`` has a row (180). Amounts are in billions of the currency the
listing is quoted in, which is the currency the demo market's statements use: a company that reports
in another currency is converted at about each year's average rate (RMB at 1.09 HKD for Tencent,
Alibaba, Meituan, BYD and the Hong Kong banks; USD at 7.8 HKD for HSBC and AIA in Hong Kong, at about
1.25-1.33 USD per GBP for HSBC, Shell, BP, AstraZeneca and Rio Tinto in London; EUR at about 0.86 GBP
for Unilever and Vodafone; EUR at about 1.08-1.15 USD for ASML in New York; USD at 1.35-1.40 CAD for
Shopify and at about 0.65-0.66 USD per AUD for BHP; TSMC's TWD and Alibaba's RMB in USD for their
ADRs, whose share counts are in ADR units). Yen, rupees and the like are billions too (Toyota's
43,500 is ¥43.5 trillion). A London listing quoted in pence has accounts in pounds.

A bank's (and a broker's) revenue is its net revenue (net interest income plus fees), an insurer's its
total revenue; banks, brokers and insurers carry a gross margin of 90% (they report none; the figure
only keeps the statements coherent). Net income is attributable net income, including one-off charges
and gains (Intel's 2024 loss, Gilead's and Merck's acquired research, J&J's Kenvue exchange), except
where a disposal gain would put the net margin above the gross (Emerson's Copeland sale in 2023, ITC's
hotels demerger in 2024: continuing operations there). Shares are about mid-2024's (the identity's
count; later splits and bonus issues are not applied, as the identity's prices are not).

Columns: ``ticker | revenue per calendar year 2023,2024,2025,2026 | net margin % (one, or four by
year) | gross margin % | total debt | diluted shares (billions) | trailing P/E band 2024-2026
(lo-hi) | quarterly revenue (optional: YYYYQn=value, where the fiscal quarters matter)``.

The P/E band spans the real trailing P/E range of 2024-2026 with room, widened where the demo market's
price (real anchors in 2024, a carried-forward trend after them for most names) against these
earnings sits outside it; where the table's trailing earnings are a loss or near break-even the P/E
is judged differently (``demo.calibration_check``, ``demo.pe_case``).

Between the points, annual revenue is interpolated log-linearly (each year's value sits at its
mid-year, a quarter's at its mid-quarter), so a quarter's revenue is a quarter of the annual rate
at its middle; before the first point it shrinks back at the table's whole trend (3-15% a year), after
the last it continues at the last year's trend (-5% to +12% a year).
"""

from __future__ import annotations

import functools
import math
from typing import Any

YEARS = (2023, 2024, 2025, 2026)

# How far the demo market's figures may stand from the table, for the dates 2024-01-01..2026-12-31.
# revenue, EPS, debt and growth (1 + growth): relative; margins: absolute (fraction points); the P/E
# must lie in the row's band (which already spans the real range with room on both sides).
TOLERANCE = {
    "revenue": 0.10,          # a quarter's revenue within ±10% of the table's rate for that quarter
    "net_margin": 0.03,       # TTM net margin within ±3 points of the table's
    "gross_margin": 0.03,     # TTM gross margin within ±3 points
    "revenue_growth": 0.08,   # a quarter's revenue over the same quarter a year before: within ±8% of the table's ratio
    "debt": 0.15,             # total debt within ±15%
    "eps": 0.15,              # TTM EPS within ±15% of the table's TTM net income / shares
    "steady_drop": 0.25,      # no quarter-on-quarter revenue drop this large for a company in the table
}

_TABLE = """
NVDA|60.9,130.5,215.8,338.0|42,55.5,53,53|75|10|24.6|25-100|2022Q1=8.29,2022Q2=6.70,2022Q3=5.93,2022Q4=6.05,2023Q1=7.19,2023Q2=13.51,2023Q3=18.12,2023Q4=22.10,2024Q1=26.04,2024Q2=30.04,2024Q3=35.08,2024Q4=39.33,2025Q1=44.06,2025Q2=46.74,2025Q3=57.01,2025Q4=68.0,2026Q1=74.0,2026Q2=81.0,2026Q3=88.0,2026Q4=95.0
AAPL|385.7,395.8,435.0,460.0|25.5|46.5|100|15.2|20-48|
MSFT|227.6,261.8,305.0,350.0|36|69.5|60|7.47|22-50|
GOOGL|307.4,350.0,402.0,450.0|24,28.6,31,30|58|28|12.4|14-42|
GOOG|307.4,350.0,402.0,450.0|24,28.6,31,30|58|28|12.4|14-42|
AMZN|574.8,638.0,717.0,790.0|5.3,9.3,10.8,10.5|48.5|130|10.7|25-90|
META|134.9,164.5,201.0,235.0|29,37.9,30,33|81.5|50|2.6|14-45|
TSLA|96.8,97.7,94.8,100.0|15.5,7.3,4,5|18|13.5|3.5|30-650|
JPM|158.1,177.6,182.0,188.0|31.4,33,31.5,31|90|450|2.87|7-20|
XOM|344.6,349.6,325.0,320.0|10.4,9.6,8.9,9|30|41|4.35|8-25|
KO|45.8,47.1,48.0,50.0|23.4,22.6,26,26|60.5|45|4.32|16-36|
PG|83.0,84.0,84.9,86.5|17.5,17.7,19,19|51|35|2.45|17-35|
WMT|648,681,710,740|2.4,2.85,2.9,2.9|24.1|60|8.05|20-50|
V|33.4,36.5,40.5,44.5|54|80|22|2.0|22-42|
MA|25.1,28.2,32.5,36.0|45.5|76|18.5|0.92|26-48|
LLY|34.1,45.0,65.0,80.0|15.4,23.5,31,31|81|36|0.90|25-160|
BAC|98.6,101.9,108.0,113.0|26.6,26.1,27.5,27.5|90|290|7.8|8-18|
WFC|82.6,82.3,84.0,87.0|23,24,25,25|90|175|3.45|7-18|
COST|245,260,280,300|2.9|12.6|8|0.444|32-70|
ORCL|51.5,55.0,61.0,72.0|19.8,20.5,21.7,21|71|100|2.85|20-80|
0941.HK|1100,1135,1145,1160|13.1,13.3,13.5,13.5|30|35|21.4|6-18|
7203.T|43500,47500,48500,50000|10.5,10.5,8,8|20|38000|13.0|5-16|
0700.HK|664,720,807,883|19.5,29,29,29|53|330|9.4|10-40|
600519.SS|150.6,174.1,183.0,190.0|49.5|92|0.1|1.256|14-40|
601398.SS|843,822,820,825|44|90|1100|356.4|3.5-10|
600036.SS|339.1,337.5,338.0,342.0|44|90|230|25.2|3.5-11|
601318.SS|913.8,1028.9,1060,1090|9.4,12.3,13,13|90|300|18.2|4-14|
600900.SS|78.1,84.5,86.0,88.0|38.5|60|290|24.5|13-32|
601857.SS|3011,2938,2850,2850|5.4,5.6,5.5,5.5|22|350|183|5-15|
600276.SS|22.8,28.0,31.5,34.0|18.9,22.6,24,24|86|1|6.38|30-95|
000858.SZ|83.3,89.2,75.0,75.0|35.7,35.7,33,33|77|0.1|3.88|10-35|
300750.SZ|401.0,362.0,400.0,450.0|11,14,17,17|24.4|100|4.4|12-35|
000333.SZ|373.7,409.1,455.0,480.0|9,9.4,9.5,9.5|26.5|65|7.6|8-20|
002594.SZ|602.3,777.1,820.0,900.0|5,5.2,4,4|20|35|2.91|12-40|
000001.SZ|164.7,146.7,135.0,132.0|28,30,31,31|90|350|19.4|3-9|
AVGO|35.8,51.6,63.9,90.0|39,11.4,36,40|66|65|4.7|25-220|
ADBE|19.4,21.5,23.7,25.9|28,25.9,30,30|88|6.1|0.44|15-60|
AMD|22.7,25.8,34.0,44.0|3.8,6.4,12.5,16|49|2.3|1.62|20-400|
AMGN|28.2,33.4,36.0,37.0|23.8,12.2,21,22|62|60|0.54|12-50|
BKNG|21.4,23.7,26.5,29.0|20,24.8,23,26|86|17|0.033|15-45|
CHTR|54.6,55.1,54.8,54.5|8.4,9.2,9.1,9|45|98|0.14|5-20|
CMCSA|121.6,123.7,123.5,124.0|12.7,13.1,15.8,12|70|99|3.8|4-18|
CSCO|57.0,53.8,56.7,60.0|22.1,19.2,18,20|64|30|4.0|10-35|
GILD|27.1,28.8,29.2,30.0|20.9,1.7,27,28|78|25|1.25|8-300|
HON|36.7,38.5,39.5,38.0|15.4,14.8,15.5,15|37|30|0.65|14-38|
INTC|54.2,53.1,52.9,54.5|3.1,-35.3,-0.6,3|36|49|4.35|15-400|
INTU|14.4,16.3,18.8,21.2|16.5,18.2,20.6,21|79|6.0|0.28|35-90|
ISRG|7.12,8.35,9.9,11.3|25.3,27.8,28.5,28.5|67|0.15|0.356|40-110|
KHC|26.6,25.8,25.0,24.5|10.8,10.6,-24,10|34|20|1.21|8-50|
LIN|32.9,33.0,33.9,35.0|18.9,19.9,20.4,21|47|20|0.48|20-45|
MDLZ|36.0,36.4,38.5,39.5|13.8,12.7,6.8,10|36|20|1.34|12-40|
NFLX|33.7,39.0,45.2,51.0|16,22.3,24.3,27|45|16|0.43|22-60|
PEP|91.5,91.9,93.5,95.5|9.9,10.4,9.1,10|54.5|44|1.37|14-35|
PYPL|29.8,31.8,33.2,35.0|14.3,13,15,15|46|11|1.0|9-30|
QCOM|35.8,39.0,44.3,46.0|20.2,26,12.5,28|56|15.5|1.11|10-40|
SBUX|36.0,36.2,37.2,39.0|11.4,10.4,5,7|27|15.5|1.13|15-70|
TMUS|78.6,81.4,88.0,92.0|10.6,13.9,12.5,13.5|62|112|1.16|13-35|
TXN|17.5,15.6,17.6,19.0|37.2,30.7,28.4,30|59|13|0.91|15-50|
PLTR|2.23,2.87,4.4,6.2|9.4,16.1,35.7,38|80|0.24|2.3|60-600|
MU|15.5,25.1,37.4,58.0|-37.5,3.1,22.8,33|42|14|1.1|4-200|
ASML|29.8,30.6,37.0,39.0|28.4,26.8,29.4,29|51|5.0|0.39|18-50|
COIN|3.11,6.56,7.4,8.0|3.1,39.3,35,25|85|4.5|0.25|10-600|
ABBV|54.3,56.3,60.5,65.0|9,7.6,6.5,18|68|66|1.77|20-110|
ABT|40.1,42.0,44.4,47.0|14.3,31.9,15.5,16|56|14.8|1.74|10-45|
ACN|64.1,64.9,69.7,72.0|10.7,11.2,11,11|32|6|0.63|18-42|
AIG|27.0,27.3,27.5,28.5|13.5,-5.1,11.5,13|90|9.5|0.63|6-45|
AMT|11.1,10.1,10.5,10.9|13.3,22.3,22,26|73|42|0.47|22-90|
AXP|60.5,65.9,72.0,77.0|13.8,15.4,15,15|62|51|0.70|11-30|
BA|77.8,66.5,88.0,100.0|-2.9,-17.8,2.5,3|8|53|0.62|20-400|
BK|17.5,18.6,20.0,21.0|18.8,23.3,26.5,27|90|31|0.73|7-22|
BLK|17.9,20.4,24.0,26.5|30.7,31.2,26,28|50|12.5|0.15|14-35|
BMY|45.0,48.3,47.5,45.5|17.8,-18.5,13.7,15|73|48|2.03|6-40|
BRK-B|364.5,371.4,372.0,380.0|26.4,24,18,14|90|125|2.16|5-28|
C|78.5,81.1,85.5,89.0|11.8,15.6,16.7,17|90|290|1.9|5-18|
CAT|67.1,64.8,66.5,70.0|15.4,16.7,14,15|34|38|0.49|9-28|
CL|19.46,20.1,20.2,20.8|11.8,14.4,13.5,14|60|8.2|0.82|16-38|
COF|36.8,39.1,53.0,60.0|13.3,12.2,5.7,17|90|52|0.38|4-35|
COP|58.6,56.95,59.5,58.0|18.7,16.2,13.4,13|33|23|1.17|7-22|
CRM|34.9,37.9,41.5,45.5|11.9,16.4,17.1,18|76|11|0.96|28-85|
CVS|357.8,372.8,395.0,410.0|2.3,1.24,0,1.6|14|64|1.26|6-30|
CVX|200.9,202.8,190.0,200.0|10.7,8.7,6.6,7|30|26|1.8|8-28|
DE|61.3,51.7,45.7,45.0|16.6,13.7,11,10.5|35|65|0.27|8-32|
DHR|23.9,23.9,24.5,25.5|19.9,16.3,15,16|59|17.5|0.72|22-60|
DIS|88.9,91.4,94.4,98.0|2.6,5.4,13.1,11|35|45|1.82|12-95|
DOW|44.6,43.0,40.0,40.5|1.3,2.6,-3.7,1|9|16.5|0.70|15-110|
DUK|29.06,30.36,31.8,33.5|9.4,14.5,15.4,15.5|55|84|0.77|13-35|
EMR|15.2,17.5,18.0,18.8|14.1,11.3,12.8,14|51|8.5|0.57|18-48|
F|176.2,185.0,187.3,190.0|2.5,3.2,-4,2.5|9|157|3.98|4-20|
FDX|87.7,87.9,90.0,92.5|4.9,4.7,4.9,5.2|23|37|0.24|9-24|
GD|42.3,47.7,51.5,54.0|7.8,7.9,8.2,8.3|16|9.8|0.275|12-30|
GE|35.3,38.7,45.5,50.0|27,17,18.7,18|36|20|1.08|8-45|
GM|171.8,187.4,185.0,187.0|5.9,3.2,2.5,5|12|128|1.1|3-20|
GS|46.25,53.5,58.5,61.0|18.4,26.7,28.7,28|90|300|0.31|7-22|
HD|152.7,159.5,166.0,172.0|9.9,9.3,8.8,9|33.4|58|0.99|16-35|
IBM|61.9,62.75,67.0,70.0|12.1,9.6,14,15|57|58|0.92|13-45|
JNJ|85.2,88.8,93.5,97.5|41.3,15.8,28.7,22|69|38|2.41|7-32|
LMT|67.6,71.0,74.5,77.5|10.2,7.5,6.7,9|12.5|20|0.24|12-32|
LOW|86.4,83.7,86.0,90.0|8.9,8.3,8,8|33.3|41|0.57|12-30|
MCD|25.5,25.9,26.8,28.0|33.2,31.7,32,32|57|52|0.72|17-35|
MDT|32.4,33.5,35.5,37.0|11.4,13.9,13.8,14|65|26.5|1.28|14-40|
MET|66.9,70.99,73.0,76.0|2.1,6.2,4.8,6|90|17|0.69|8-45|
MMM|24.6,24.6,25.0,25.8|-28.5,17,14.8,17|41|13|0.55|10-60|
MO|20.5,20.4,20.2,20.2|39.7,55.2,40,44|70|25.5|1.7|5-16|
MRK|60.1,64.2,64.5,66.5|0.6,26.7,28.7,26|76|36|2.53|8-900|
MS|54.1,61.8,70.0,73.0|16.8,21.7,23.5,23|90|290|1.61|8-25|
NEE|28.1,24.75,26.5,28.5|26,28.1,26,27|62|86|2.05|12-32|
NKE|51.4,46.3,46.0,47.5|11.1,7,5.2,7|43|12|1.5|18-60|
PFE|58.5,63.6,62.0,61.0|3.6,12.6,16.8,17|68|63|5.67|8-100|
PM|35.2,37.9,40.5,43.0|22.2,18.6,27,28|65|47|1.55|11-35|
RTX|68.9,80.7,87.5,92.0|4.6,5.9,7.5,8|19|42|1.33|16-50|
SCHW|18.84,19.6,23.5,26.0|26.9,30.3,37.5,38|90|45|1.78|10-35|
SO|25.25,26.72,28.5,30.0|15.8,16.5,15.4,16|48|66|1.09|13-30|
SPG|5.66,5.96,6.2,6.4|40.3,39.8,40,40|82|26|0.33|14-32|
T|122.4,122.3,124.5,126.5|11.8,9,17.7,14|59|135|7.17|5-22|
TGT|107.4,106.6,105.0,106.5|3.9,3.8,3.4,3.5|28.3|19.5|0.46|9-25|
TMO|42.86,42.88,44.3,46.5|14,14.8,14.9,15.5|41.5|34|0.38|20-45|
UNH|371.6,400.3,447.0,450.0|6,3.6,2.8,3.5|21|74|0.92|13-50|
UNP|24.12,24.25,24.6,25.4|26.5,27.8,28.9,29|55|32.5|0.61|14-30|
UPS|91.0,91.1,88.5,86.5|7.4,6.3,6.3,6.3|19|26|0.85|11-30|
USB|28.0,27.3,28.3,29.5|19.4,23.1,25.8,26|90|62|1.56|7-20|
VZ|134.0,134.8,137.5,139.5|8.7,13,12.5,13|59|148|4.2|6-20|
UBER|37.28,43.98,52.0,60.0|5.1,22.4,21.5,13|39|12|2.1|8-110|
TSM|69.3,90.1,122.0,150.0|38.8,40.5,45,45|57|29|5.2|12-40|
BABA|130.3,137.3,145.0,155.0|8.5,13,10,10|39|22|2.4|7-30|
9988.HK|1025.7,1085.6,1133.6,1209.9|8.5,13,10,10|39|172|19.0|7-30|
0005.HK|515.6,514.0,522.6,538.2|33.9,34.8,32,33|90|1000|18.0|4-13|
1299.HK|149.0,155.2,163.8,171.6|19.7,34.4,33,33|90|90|11.0|8-35|
3690.HK|301.6,368.0,397.9,457.8|5,10.6,-6.3,1|36|40|6.1|12-90|
1810.HK|295.4,398.8,523.2,610.4|6.5,6.5,8.8,8|21.5|33|25.0|12-50|
0388.HK|20.5,22.4,28.5,30.0|58,58.3,61.4,60|90|2.5|1.27|15-45|
2318.HK|996.0,1121.5,1155.4,1188.1|9.4,12.3,13,13|90|327|18.3|3.5-14|
0939.HK|839.0,817.7,812.1,817.5|43.2,44.7,45,45|90|1308|250|2.5-8|
1398.HK|918.9,896.0,893.8,899.3|44|90|1199|356|2.5-8|
1211.HK|656.5,847.0,893.8,981.0|5,5.2,4,4|20|38|2.9|10-40|
9618.HK|1182.3,1263.1,1417.0,1526.0|2.2,3.6,1.5,2.5|15.5|65|3.1|6-35|
0883.HK|454.1,458.3,436.0,425.0|29.7,32.8,31.3,30|52|105|47.6|3-11|
6758.T|13020,13960,12300,12700|7.5,8.2,8.5,8.5|28|3000|6.15|11-30|
9984.T|6757,7244,7500,7800|-3.4,15.9,46.7,20|52|24000|1.47|3-60|
8306.T|4879,5080,5600,5900|30.6,36.7,37.5,39|90|45000|12.0|6-18|
6861.T|967.3,1059.2,1120,1190|37.5,37.6,37.5,37.5|83|5|0.243|28-55|
8035.T|1830.5,2431.5,2380,2600|19.9,22.4,21,22|46|15|0.47|12-45|
9432.T|13374.6,13704.7,14100,14400|9.6,7.3,7.4,7.5|52|12000|90.5|8-22|
7974.T|1671.9,1164.9,2250,2400|29.3,23.9,15.6,17|52|20|1.16|13-55|
6501.T|9728.7,9783.3,9900,10300|6.1,6.3,7.3,8|28|1800|4.6|11-40|
9983.T|2766.6,3103.8,3400.5,3750|10.7,12,12.7,12.8|53.5|1000|0.306|25-60|
8058.T|19567.6,18617.6,18000,18500|4.9,5.1,3.9,4.5|11|5500|4.2|6-22|
4063.T|2414.9,2561.2,2500,2600|21.5,20.8,18.8,19.5|34|30|2.0|13-32|
6098.T|3416.5,3557.5,3650,3800|10.4,11.5,12.3,12.5|58|400|1.5|18-60|
7267.T|20428.8,21688.8,21100,21500|5.4,3.9,2.6,3.5|21|10000|5.0|5-20|
SHEL.L|254.5,226.1,200.8,195.5|6.1,5.6,6.7,6.5|21|60|6.4|6-20|
AZN.L|36.8,42.3,44.3,47.4|13,13,17,19|81|23|1.55|14-48|
HSBA.L|53.1,51.5,50.8,51.9|33.9,34.8,32,33|90|100|18.0|4-13|
ULVR.L|51.7,51.5,50.2,44.7|10.9,9.4,11,12|45|25|2.5|13-32|
BP.L|168.9,148.0,140.2,135.3|7.3,0.2,1.1,3.3|20|47|16.5|4-40|
GSK.L|30.3,31.4,32.5,33.5|16.3,8.2,16.9,18|72|16|4.1|6-30|
RIO.L|43.4,42.0,41.7,43.6|18.6,21.5,19,19|35|13.3|1.62|6-17|
BATS.L|27.3,25.9,25.5,26.0|-52.7,11.8,30,32|83|38|2.2|5-30|
LSEG.L|8.0,8.48,9.0,9.6|9.5,8.6,13.3,16|87|9.5|0.53|30-110|
BARC.L|25.4,26.8,29.0,30.5|20.7,19.9,21.4,23|90|100|14.8|3-12|
LLOY.L|17.9,17.1,18.3,19.5|28,26.2,25,29|90|90|61.0|4-12|
VOD.L|31.8,31.7,32.7,33.8|3.1,-11.1,3,5|32|49|26.0|7-30|
DGE.L|17.1,16.0,15.5,15.0|21.6,19,11.4,16|60|21|2.22|12-40|
REL.L|9.16,9.43,9.7,10.2|19.4,20.4,21.6,22|65|7.2|1.87|22-45|
RELIANCE.NS|9000,9650,10300,11000|7.7,7.2,7.9,8|32|3450|13.5|14-35|
TCS.NS|2408.9,2553.2,2650,2800|19.1,19,18.7,19|40|80|3.62|20-40|
INFY.NS|1536.7,1629.9,1750,1850|17.1,16.4,16.6,16.8|30|80|4.15|17-38|
HDFCBANK.NS|1577,1680,1900,2000|38.6,40,37.9,39.5|90|6000|7.6|13-30|
ICICIBANK.NS|975,1080,1170,1280|41.9,43.7,43.6,43.5|90|1300|7.05|12-28|
SBIN.NS|2116,2282,2450,2600|28.9,31.1,32.2,32|90|5900|8.9|6-15|
BHARTIARTL.NS|1500.4,1729.9,2000,2250|5,19.4,13.5,14|70|2150|5.9|20-120|
HINDUNILVR.NS|619,631,650,680|16.3,16.9,16.9,17|51|12|2.35|35-75|
ITC.NS|700,740,790,840|29.2,27.4,26,26.5|57|3|12.5|18-40|
LT.NS|2211.1,2557.3,2850,3150|5.9,5.9,6.1,6.2|30|1200|1.37|20-48|
TATAMOTORS.NS|4379.3,4398.4,4100,4300|7.2,6.4,2.4,4.5|35|1150|3.68|6-40|
WIPRO.NS|897.6,890.9,915,950|12.3,14.7,14.6,14.8|30|150|10.4|15-35|
RY.TO|56.1,57.3,64.0,67.0|26.5,28.3,31.9,32|90|120|1.41|8-20|
TD.TO|50.5,57.2,61.0,60.0|21,15.5,33.6,25|90|110|1.75|5-22|
SHOP.TO|9.53,12.17,16.1,19.7|1.9,22.8,12,15|50|1.6|1.29|40-900|
BHP.AX|81.0,84.4,79.5,80.0|24,14.2,17.5,18|48|33|5.07|8-24|
CBA.AX|27.2,27.3,28.4,29.5|37.4,34.7,35.6,36|90|150|1.67|14-38|
"""


def _floats(text: str) -> tuple[float, ...]:
    return tuple(float(x) for x in text.split(","))


@functools.lru_cache(maxsize=1)
def table() -> dict[str, dict[str, Any]]:
    """Every calibrated company by ticker: annual revenue, margins, debt, shares, P/E band (in units)."""
    out: dict[str, dict[str, Any]] = {}
    for line in _TABLE.strip().splitlines():
        ticker, rev, margin, gross, debt, shares, band, quarters = line.split("|")
        revenue = _floats(rev)
        margins = _floats(margin)
        if len(margins) == 1:
            margins = margins * len(YEARS)
        if len(revenue) != len(YEARS) or len(margins) != len(YEARS):
            raise ValueError(f"demo calibration row {ticker}: four years of revenue and margin expected")
        lo, hi = (float(x) for x in band.split("-"))
        quarterly = {}
        for item in filter(None, quarters.split(",")):
            key, value = item.split("=")
            quarterly[key] = float(value) * 1e9
        out[ticker] = {
            "revenue": {y: v * 1e9 for y, v in zip(YEARS, revenue, strict=True)},
            "net_margin": {y: m / 100.0 for y, m in zip(YEARS, margins, strict=True)},
            "gross_margin": float(gross) / 100.0, "debt": float(debt) * 1e9,
            "shares": float(shares) * 1e9, "pe_band": (lo, hi), "quarterly": quarterly,
        }
    return out


def calibrated(ticker: str) -> dict[str, Any] | None:
    """The calibration row of a ticker, or None (its figures are then derived from its price path)."""
    return table().get(ticker)


def _year_frac(day) -> float:
    """A date as a fractional year (2024-07-01 ~ 2024.5)."""
    return day.year + (day.timetuple().tm_yday - 0.5) / (366 if day.year % 4 == 0 else 365)


def _points(row: dict[str, Any]) -> list[tuple[float, float]]:
    """(fractional year, annualised revenue) points, oldest first: quarters where given, else years."""
    pts: dict[float, float] = {}
    quarterly = row["quarterly"]
    covered = {int(k[:4]) for k in quarterly}
    for year, value in row["revenue"].items():
        if year not in covered:
            pts[year + 0.5] = value
    for key, value in quarterly.items():
        year, q = int(key[:4]), int(key[5])
        pts[year + (q - 1) * 0.25 + 0.125] = value * 4.0
    return sorted(pts.items())


_LATER_GROWTH = (-0.05, 0.12)  # after the table: its last year's trend, bounded per year
_EARLIER_GROWTH = (0.03, 0.15)  # before it: the table's whole trend, bounded (a company grew into its size)


def revenue_rate(row: dict[str, Any], day) -> float:
    """The annualised revenue the table implies at a date (log-linear between points)."""
    pts = _points(row)
    x = _year_frac(day)
    if x <= pts[0][0]:
        (x0, v0), (x1, v1) = pts[0], pts[-1]
        g = min(math.log1p(_EARLIER_GROWTH[1]), max(math.log1p(_EARLIER_GROWTH[0]), math.log(v1 / v0) / (x1 - x0)))
        return v0 * math.exp(g * (x - x0))
    if x >= pts[-1][0]:
        (x0, v0), (x1, v1) = pts[max(-5, -len(pts))], pts[-1]
        g = min(math.log1p(_LATER_GROWTH[1]), max(math.log1p(_LATER_GROWTH[0]), math.log(v1 / v0) / (x1 - x0)))
        return v1 * math.exp(g * (x - x1))
    for (x0, v0), (x1, v1) in zip(pts, pts[1:], strict=False):
        if x0 <= x <= x1:
            w = (x - x0) / (x1 - x0)
            return math.exp(math.log(v0) + w * (math.log(v1) - math.log(v0)))
    return pts[-1][1]  # pragma: no cover - the loop covers every x inside the table


def net_margin(row: dict[str, Any], day) -> float:
    """The table's net margin at a date (linear between mid-years, flat outside them)."""
    x = _year_frac(day) - 0.5
    years = sorted(row["net_margin"])
    if x <= years[0]:
        return row["net_margin"][years[0]]
    if x >= years[-1]:
        return row["net_margin"][years[-1]]
    y0 = int(math.floor(x))
    w = x - y0
    return row["net_margin"][y0] * (1 - w) + row["net_margin"][y0 + 1] * w


def quarter_revenue(row: dict[str, Any], quarter_end) -> float:
    """The table's revenue for the calendar quarter ending on ``quarter_end`` (a date)."""
    import datetime as dt

    mid = quarter_end - dt.timedelta(days=45)
    return revenue_rate(row, mid) / 4.0


__all__ = ["TOLERANCE", "YEARS", "calibrated", "net_margin", "quarter_revenue", "revenue_rate", "table"]
