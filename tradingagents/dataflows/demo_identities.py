"""Real identities and price anchors of the demo market's best-known instruments (a data table).

Each row gives the real name, sector, industry, exchange and currency of an instrument, plus what
makes its synthetic prices credible: two anchor closes (about the first and the last session of
2024, split-adjusted as Yahoo Finance shows them, rounded), an annual volatility and, for
companies, the shares outstanding (billions) and optionally a beta. The demo market bends its
seeded random path through the anchors, so AAPL trades near 185-250 in 2024 and 7203.T in yen
thousands — the order of magnitude is right, the day-to-day history is NOT real (every price,
figure and headline stays "synthetic demo data").

London prices are in pence (currency ``GBp``), as Yahoo Finance quotes them.

Indices carry a third anchor: their level on 2000-01-03, so a long chart starts where the real
index did. ``seed`` ties a fund to the index it tracks (SPY moves with ^GSPC, QQQ with ^NDX…).

Tickers not listed here keep generated (fictional) profiles.
"""

from __future__ import annotations

import functools
from typing import Any

ANCHOR_DATES = ("2024-01-02", "2024-12-31")
LEAD_IN_DATE = "2023-01-03"  # the demo market adds a synthetic anchor here for stocks and funds (not real)
INDEX_START_DATE = "2000-01-03"

# ticker | name | sector | industry | p_2024_01 | p_2024_12 | vol % | shares bn | beta (optional)
_STOCKS: dict[tuple[str, str], str] = {
    ("NASDAQ", "USD"): """
AAPL|Apple Inc.|Technology|Consumer Electronics|185|250|22|15.4|1.2
MSFT|Microsoft Corporation|Technology|Software—Infrastructure|370|421|22|7.43|1.1
NVDA|NVIDIA Corporation|Technology|Semiconductors|48|134|50|24.5|1.7
AMZN|Amazon.com, Inc.|Consumer Cyclical|Internet Retail|150|219|30|10.5|1.2
GOOGL|Alphabet Inc.|Communication Services|Internet Content & Information|139|189|28|5.8|1.05
GOOG|Alphabet Inc.|Communication Services|Internet Content & Information|140|191|28|5.5|1.05
META|Meta Platforms, Inc.|Communication Services|Internet Content & Information|346|586|35|2.53|1.3
TSLA|Tesla, Inc.|Consumer Cyclical|Auto Manufacturers|248|404|55|3.2|2.0
AVGO|Broadcom Inc.|Technology|Semiconductors|110|232|40|4.7|1.3
ADBE|Adobe Inc.|Technology|Software—Infrastructure|590|445|30|0.44|1.2
AMD|Advanced Micro Devices, Inc.|Technology|Semiconductors|138|121|45|1.62|1.7
AMGN|Amgen Inc.|Healthcare|Drug Manufacturers—General|285|261|22|0.54|0.6
BKNG|Booking Holdings Inc.|Consumer Cyclical|Travel Services|3500|4970|25|0.033|1.2
CHTR|Charter Communications, Inc.|Communication Services|Telecom Services|385|343|35|0.14|1.0
CMCSA|Comcast Corporation|Communication Services|Telecom Services|43|37.5|22|3.8|0.9
COST|Costco Wholesale Corporation|Consumer Defensive|Discount Stores|660|916|20|0.44|0.8
CSCO|Cisco Systems, Inc.|Technology|Communication Equipment|50|59|18|4.0|0.85
GILD|Gilead Sciences, Inc.|Healthcare|Drug Manufacturers—General|81|92|22|1.25|0.3
HON|Honeywell International Inc.|Industrials|Conglomerates|210|226|18|0.65|1.0
INTC|Intel Corporation|Technology|Semiconductors|48|20|40|4.3|1.1
INTU|Intuit Inc.|Technology|Software—Application|625|628|28|0.28|1.25
ISRG|Intuitive Surgical, Inc.|Healthcare|Medical Instruments & Supplies|335|522|28|0.356|1.3
KHC|The Kraft Heinz Company|Consumer Defensive|Packaged Foods|37|31|18|1.21|0.5
LIN|Linde plc|Basic Materials|Specialty Chemicals|410|419|18|0.48|0.9
MDLZ|Mondelez International, Inc.|Consumer Defensive|Confectioners|72|60|16|1.34|0.5
NFLX|Netflix, Inc.|Communication Services|Entertainment|470|891|32|0.43|1.3
PEP|PepsiCo, Inc.|Consumer Defensive|Beverages—Non-Alcoholic|168|152|15|1.37|0.5
PYPL|PayPal Holdings, Inc.|Financial Services|Credit Services|61|85|32|1.0|1.4
QCOM|QUALCOMM Incorporated|Technology|Semiconductors|142|154|32|1.11|1.3
SBUX|Starbucks Corporation|Consumer Cyclical|Restaurants|95|91|28|1.13|1.0
TMUS|T-Mobile US, Inc.|Communication Services|Telecom Services|160|221|18|1.16|0.5
TXN|Texas Instruments Incorporated|Technology|Semiconductors|170|187|25|0.91|1.0
PLTR|Palantir Technologies Inc.|Technology|Software—Infrastructure|17|76|55|2.3|2.0
MU|Micron Technology, Inc.|Technology|Semiconductors|85|84|45|1.1|1.4
ASML|ASML Holding N.V.|Technology|Semiconductor Equipment & Materials|750|693|35|0.39|1.3
COIN|Coinbase Global, Inc.|Financial Services|Financial Data & Stock Exchanges|170|248|70|0.25|2.5
""",
    ("NYSE", "USD"): """
ABBV|AbbVie Inc.|Healthcare|Drug Manufacturers—General|165|178|22|1.77|0.6
ABT|Abbott Laboratories|Healthcare|Medical Devices|110|113|18|1.74|0.7
ACN|Accenture plc|Technology|Information Technology Services|350|352|22|0.63|1.1
AIG|American International Group, Inc.|Financial Services|Insurance—Diversified|68|73|22|0.63|1.0
AMT|American Tower Corporation|Real Estate|REIT—Specialty|210|183|25|0.47|0.9
AXP|American Express Company|Financial Services|Credit Services|190|297|22|0.70|1.2
BA|The Boeing Company|Industrials|Aerospace & Defense|255|177|32|0.62|1.4
BAC|Bank of America Corporation|Financial Services|Banks—Diversified|33|44|24|7.8|1.3
BK|The Bank of New York Mellon Corporation|Financial Services|Banks—Diversified|52|77|20|0.73|1.1
BLK|BlackRock, Inc.|Financial Services|Asset Management|800|1025|22|0.15|1.2
BMY|Bristol-Myers Squibb Company|Healthcare|Drug Manufacturers—General|51|57|25|2.03|0.4
BRK-B|Berkshire Hathaway Inc.|Financial Services|Insurance—Diversified|357|453|15|2.16|0.85
C|Citigroup Inc.|Financial Services|Banks—Diversified|52|70|26|1.9|1.4
CAT|Caterpillar Inc.|Industrials|Farm & Heavy Construction Machinery|290|363|25|0.49|1.1
CL|Colgate-Palmolive Company|Consumer Defensive|Household & Personal Products|79|91|15|0.82|0.4
COF|Capital One Financial Corporation|Financial Services|Credit Services|130|178|28|0.38|1.4
COP|ConocoPhillips|Energy|Oil & Gas E&P|115|99|25|1.17|0.9
CRM|Salesforce, Inc.|Technology|Software—Application|263|334|30|0.96|1.3
CVS|CVS Health Corporation|Healthcare|Healthcare Plans|78|45|30|1.26|0.6
CVX|Chevron Corporation|Energy|Oil & Gas Integrated|149|145|20|1.8|0.9
DE|Deere & Company|Industrials|Farm & Heavy Construction Machinery|400|424|22|0.27|1.0
DHR|Danaher Corporation|Healthcare|Diagnostics & Research|231|230|22|0.72|0.9
DIS|The Walt Disney Company|Communication Services|Entertainment|90|111|25|1.82|1.2
DOW|Dow Inc.|Basic Materials|Chemicals|54|40|25|0.70|1.1
DUK|Duke Energy Corporation|Utilities|Utilities—Regulated Electric|97|108|16|0.77|0.45
EMR|Emerson Electric Co.|Industrials|Specialty Industrial Machinery|97|124|22|0.57|1.2
F|Ford Motor Company|Consumer Cyclical|Auto Manufacturers|12|9.9|32|3.98|1.5
FDX|FedEx Corporation|Industrials|Integrated Freight & Logistics|253|275|28|0.24|1.2
GD|General Dynamics Corporation|Industrials|Aerospace & Defense|260|263|18|0.275|0.7
GE|GE Aerospace|Industrials|Aerospace & Defense|100|167|28|1.08|1.2
GM|General Motors Company|Consumer Cyclical|Auto Manufacturers|36|53|30|1.1|1.4
GS|The Goldman Sachs Group, Inc.|Financial Services|Capital Markets|385|573|24|0.31|1.3
HD|The Home Depot, Inc.|Consumer Cyclical|Home Improvement Retail|347|389|20|0.99|1.0
IBM|International Business Machines Corporation|Technology|Information Technology Services|162|220|22|0.92|0.7
JNJ|Johnson & Johnson|Healthcare|Drug Manufacturers—General|156|145|15|2.41|0.5
JPM|JPMorgan Chase & Co.|Financial Services|Banks—Diversified|170|240|20|2.85|1.1
KO|The Coca-Cola Company|Consumer Defensive|Beverages—Non-Alcoholic|59|62|14|4.31|0.6
LLY|Eli Lilly and Company|Healthcare|Drug Manufacturers—General|580|772|30|0.95|0.4
LMT|Lockheed Martin Corporation|Industrials|Aerospace & Defense|450|486|18|0.24|0.5
LOW|Lowe's Companies, Inc.|Consumer Cyclical|Home Improvement Retail|222|247|22|0.57|1.1
MA|Mastercard Incorporated|Financial Services|Credit Services|425|527|18|0.92|1.1
MCD|McDonald's Corporation|Consumer Cyclical|Restaurants|295|290|16|0.72|0.7
MDT|Medtronic plc|Healthcare|Medical Devices|82|80|18|1.28|0.8
MET|MetLife, Inc.|Financial Services|Insurance—Life|66|82|22|0.69|1.1
MMM|3M Company|Industrials|Conglomerates|88|129|25|0.55|1.0
MO|Altria Group, Inc.|Consumer Defensive|Tobacco|40|52|16|1.7|0.6
MRK|Merck & Co., Inc.|Healthcare|Drug Manufacturers—General|108|99|20|2.53|0.4
MS|Morgan Stanley|Financial Services|Capital Markets|92|126|24|1.61|1.3
NEE|NextEra Energy, Inc.|Utilities|Utilities—Regulated Electric|60|72|25|2.05|0.6
NKE|NIKE, Inc.|Consumer Cyclical|Footwear & Accessories|107|76|28|1.5|1.0
ORCL|Oracle Corporation|Technology|Software—Infrastructure|104|167|30|2.8|1.0
PFE|Pfizer Inc.|Healthcare|Drug Manufacturers—General|29|26.5|22|5.67|0.6
PG|The Procter & Gamble Company|Consumer Defensive|Household & Personal Products|146|168|15|2.36|0.4
PM|Philip Morris International Inc.|Consumer Defensive|Tobacco|94|120|18|1.55|0.5
RTX|RTX Corporation|Industrials|Aerospace & Defense|85|116|22|1.33|0.8
SCHW|The Charles Schwab Corporation|Financial Services|Capital Markets|68|74|28|1.78|1.0
SO|The Southern Company|Utilities|Utilities—Regulated Electric|70|82|16|1.09|0.5
SPG|Simon Property Group, Inc.|Real Estate|REIT—Retail|142|172|22|0.33|1.4
T|AT&T Inc.|Communication Services|Telecom Services|17|22.8|20|7.17|0.6
TGT|Target Corporation|Consumer Defensive|Discount Stores|142|135|30|0.46|1.1
TMO|Thermo Fisher Scientific Inc.|Healthcare|Diagnostics & Research|530|520|22|0.38|0.8
UNH|UnitedHealth Group Incorporated|Healthcare|Healthcare Plans|520|506|22|0.92|0.6
UNP|Union Pacific Corporation|Industrials|Railroads|245|228|20|0.61|1.0
UPS|United Parcel Service, Inc.|Industrials|Integrated Freight & Logistics|157|126|25|0.85|1.0
USB|U.S. Bancorp|Financial Services|Banks—Regional|43|48|25|1.56|1.0
V|Visa Inc.|Financial Services|Credit Services|260|316|16|2.0|0.95
VZ|Verizon Communications Inc.|Communication Services|Telecom Services|38|40|18|4.2|0.4
WFC|Wells Fargo & Company|Financial Services|Banks—Diversified|49|70|25|3.4|1.1
WMT|Walmart Inc.|Consumer Defensive|Discount Stores|52|90|18|8.0|0.5
XOM|Exxon Mobil Corporation|Energy|Oil & Gas Integrated|100|107|22|4.4|0.9
UBER|Uber Technologies, Inc.|Technology|Software—Application|61|60|35|2.1|1.3
TSM|Taiwan Semiconductor Manufacturing Company Limited|Technology|Semiconductors|104|197|35|5.2|1.2
BABA|Alibaba Group Holding Limited|Consumer Cyclical|Internet Retail|76|85|38|2.4|0.4
""",
    ("HKEX", "HKD"): """
0700.HK|Tencent Holdings Limited|Communication Services|Internet Content & Information|294|417|32|9.4
9988.HK|Alibaba Group Holding Limited|Consumer Cyclical|Internet Retail|75|82.5|38|19.0
0005.HK|HSBC Holdings plc|Financial Services|Banks—Diversified|63|76.5|20|18.0
1299.HK|AIA Group Limited|Financial Services|Insurance—Life|68|56|28|11.0
0941.HK|China Mobile Limited|Communication Services|Telecom Services|65|76.6|18|21.4
3690.HK|Meituan|Consumer Cyclical|Internet Retail|80|152|50|6.1
1810.HK|Xiaomi Corporation|Technology|Consumer Electronics|15.5|34.5|45|25.0
0388.HK|Hong Kong Exchanges and Clearing Limited|Financial Services|Financial Data & Stock Exchanges|265|295|28|1.27
2318.HK|Ping An Insurance (Group) Company of China, Ltd.|Financial Services|Insurance—Life|35|46|32|18.3
0939.HK|China Construction Bank Corporation|Financial Services|Banks—Diversified|4.6|6.5|22|250
1398.HK|Industrial and Commercial Bank of China Limited|Financial Services|Banks—Diversified|3.8|5.2|22|356
1211.HK|BYD Company Limited|Consumer Cyclical|Auto Manufacturers|213|267|40|2.9
9618.HK|JD.com, Inc.|Consumer Cyclical|Internet Retail|110|136|45|3.1
0883.HK|CNOOC Limited|Energy|Oil & Gas E&P|13|19.9|28|47.6
""",
    ("Tokyo Stock Exchange", "JPY"): """
7203.T|Toyota Motor Corporation|Consumer Cyclical|Auto Manufacturers|2600|2748|28|13.0
6758.T|Sony Group Corporation|Technology|Consumer Electronics|2700|3370|28|6.15
9984.T|SoftBank Group Corp.|Communication Services|Telecom Services|6300|9190|45|1.47
8306.T|Mitsubishi UFJ Financial Group, Inc.|Financial Services|Banks—Diversified|1230|1846|30|12.0
6861.T|Keyence Corporation|Technology|Scientific & Technical Instruments|62500|64630|28|0.243
8035.T|Tokyo Electron Limited|Technology|Semiconductor Equipment & Materials|25500|24200|45|0.47
9432.T|Nippon Telegraph and Telephone Corporation|Communication Services|Telecom Services|172|158|20|90.5
7974.T|Nintendo Co., Ltd.|Communication Services|Electronic Gaming & Multimedia|7400|9265|30|1.16
6501.T|Hitachi, Ltd.|Industrials|Conglomerates|2060|3937|32|4.6
9983.T|Fast Retailing Co., Ltd.|Consumer Cyclical|Apparel Retail|35000|53830|28|0.306
8058.T|Mitsubishi Corporation|Industrials|Conglomerates|2250|2604|28|4.2
4063.T|Shin-Etsu Chemical Co., Ltd.|Basic Materials|Specialty Chemicals|5900|5298|30|2.0
6098.T|Recruit Holdings Co., Ltd.|Industrials|Staffing & Employment Services|6000|11145|35|1.5
7267.T|Honda Motor Co., Ltd.|Consumer Cyclical|Auto Manufacturers|1470|1535|28|5.0
""",
    ("London Stock Exchange", "GBp"): """
SHEL.L|Shell plc|Energy|Oil & Gas Integrated|2570|2480|22|6.4
AZN.L|AstraZeneca PLC|Healthcare|Drug Manufacturers—General|10600|10470|20|1.55
HSBA.L|HSBC Holdings plc|Financial Services|Banks—Diversified|636|785|20|18.0
ULVR.L|Unilever PLC|Consumer Defensive|Household & Personal Products|3800|4550|16|2.5
BP.L|BP p.l.c.|Energy|Oil & Gas Integrated|467|393|25|16.5
GSK.L|GSK plc|Healthcare|Drug Manufacturers—General|1450|1347|20|4.1
RIO.L|Rio Tinto Group|Basic Materials|Other Industrial Metals & Mining|5840|4730|25|1.25
BATS.L|British American Tobacco p.l.c.|Consumer Defensive|Tobacco|2300|2885|20|2.2
LSEG.L|London Stock Exchange Group plc|Financial Services|Financial Data & Stock Exchanges|9280|11285|20|0.53
BARC.L|Barclays PLC|Financial Services|Banks—Diversified|154|268|30|14.8
LLOY.L|Lloyds Banking Group plc|Financial Services|Banks—Regional|47.7|54.8|25|61.0
VOD.L|Vodafone Group Public Limited Company|Communication Services|Telecom Services|68.6|68.3|22|26.0
DGE.L|Diageo plc|Consumer Defensive|Beverages—Wineries & Distilleries|2860|2538|22|2.22
REL.L|RELX PLC|Industrials|Specialty Business Services|3110|3629|18|1.87
""",
    ("NSE", "INR"): """
RELIANCE.NS|Reliance Industries Limited|Energy|Oil & Gas Refining & Marketing|1290|1211|22|13.5
TCS.NS|Tata Consultancy Services Limited|Technology|Information Technology Services|3800|4100|20|3.62
INFY.NS|Infosys Limited|Technology|Information Technology Services|1550|1880|22|4.15
HDFCBANK.NS|HDFC Bank Limited|Financial Services|Banks—Regional|1690|1780|20|7.6
ICICIBANK.NS|ICICI Bank Limited|Financial Services|Banks—Regional|990|1280|20|7.05
SBIN.NS|State Bank of India|Financial Services|Banks—Regional|640|793|25|8.9
BHARTIARTL.NS|Bharti Airtel Limited|Communication Services|Telecom Services|1030|1590|22|5.9
HINDUNILVR.NS|Hindustan Unilever Limited|Consumer Defensive|Household & Personal Products|2650|2325|18|2.35
ITC.NS|ITC Limited|Consumer Defensive|Tobacco|465|483|18|12.5
LT.NS|Larsen & Toubro Limited|Industrials|Engineering & Construction|3500|3625|24|1.37
TATAMOTORS.NS|Tata Motors Limited|Consumer Cyclical|Auto Manufacturers|780|740|35|3.68
WIPRO.NS|Wipro Limited|Technology|Information Technology Services|240|302|25|10.4
""",
    ("Shanghai Stock Exchange", "CNY"): """
600519.SS|Kweichow Moutai Co., Ltd.|Consumer Defensive|Beverages—Wineries & Distilleries|1700|1525|25|1.256
601398.SS|Industrial and Commercial Bank of China Limited|Financial Services|Banks—Diversified|5.1|7.06|18|356
600036.SS|China Merchants Bank Co., Ltd.|Financial Services|Banks—Regional|27.5|38.8|25|25.2
601318.SS|Ping An Insurance (Group) Company of China, Ltd.|Financial Services|Insurance—Life|40|52|28|18.2
600900.SS|China Yangtze Power Co., Ltd.|Utilities|Utilities—Renewable|23.5|29.5|18|24.5
601857.SS|PetroChina Company Limited|Energy|Oil & Gas Integrated|7.0|8.4|25|183
600276.SS|Jiangsu Hengrui Pharmaceuticals Co., Ltd.|Healthcare|Drug Manufacturers—Specialty & Generic|45|45.7|32|6.38
""",
    ("Shenzhen Stock Exchange", "CNY"): """
000858.SZ|Wuliangye Yibin Co., Ltd.|Consumer Defensive|Beverages—Wineries & Distilleries|140|139.5|30|3.88
300750.SZ|Contemporary Amperex Technology Co., Limited|Industrials|Electrical Equipment & Parts|160|267|40|4.4
000333.SZ|Midea Group Co., Ltd.|Consumer Cyclical|Furnishings, Fixtures & Appliances|55|75|28|7.0
002594.SZ|BYD Company Limited|Consumer Cyclical|Auto Manufacturers|195|283|40|2.9
000001.SZ|Ping An Bank Co., Ltd.|Financial Services|Banks—Regional|9.2|11.7|25|19.4
""",
    ("Toronto Stock Exchange", "CAD"): """
RY.TO|Royal Bank of Canada|Financial Services|Banks—Diversified|135|173|16|1.41
TD.TO|The Toronto-Dominion Bank|Financial Services|Banks—Diversified|86|76.5|18|1.75
SHOP.TO|Shopify Inc.|Technology|Software—Application|103|153|50|1.29
""",
    ("ASX", "AUD"): """
BHP.AX|BHP Group Limited|Basic Materials|Other Industrial Metals & Mining|50|39.6|24|5.07
CBA.AX|Commonwealth Bank of Australia|Financial Services|Banks—Diversified|112|153|18|1.67
""",
}

# ticker | name | category (industry) | exchange | p_2024_01 | p_2024_12 | vol % | beta | seed (tracked index)
_FUNDS = """
QQQ|Invesco QQQ Trust, Series 1|Large Growth|NASDAQ|402|511|22|1.15|^NDX
IWM|iShares Russell 2000 ETF|Small Blend|NYSE Arca|198|221|23|1.1|^RUT
DIA|SPDR Dow Jones Industrial Average ETF Trust|Large Value|NYSE Arca|376|423|15|0.9|^DJI
VOO|Vanguard S&P 500 ETF|Large Blend|NYSE Arca|433|539|16|1.0|^GSPC
IVV|iShares Core S&P 500 ETF|Large Blend|NYSE Arca|474|589|16|1.0|^GSPC
VTI|Vanguard Total Stock Market ETF|Large Blend|NYSE Arca|236|290|17|1.02|
EFA|iShares MSCI EAFE ETF|Foreign Large Blend|NYSE Arca|75|76|15|0.7|
VEA|Vanguard FTSE Developed Markets ETF|Foreign Large Blend|NYSE Arca|47|48|15|0.7|
EEM|iShares MSCI Emerging Markets ETF|Diversified Emerging Mkts|NYSE Arca|40|42|18|0.6|
GLD|SPDR Gold Shares|Commodities Focused|NYSE Arca|190|242|14|0.1|
SLV|iShares Silver Trust|Commodities Focused|NYSE Arca|21.6|26.3|28|0.3|
TLT|iShares 20+ Year Treasury Bond ETF|Long Government|NASDAQ|98|87|16|-0.1|
AGG|iShares Core U.S. Aggregate Bond ETF|Intermediate Core Bond|NYSE Arca|99|97|6|0.05|
HYG|iShares iBoxx $ High Yield Corporate Bond ETF|High Yield Bond|NYSE Arca|77|79|6|0.3|
XLK|Technology Select Sector SPDR Fund|Technology|NYSE Arca|192|233|22|1.2|
XLF|Financial Select Sector SPDR Fund|Financial|NYSE Arca|37.5|48|17|1.0|
XLE|Energy Select Sector SPDR Fund|Equity Energy|NYSE Arca|84|86|22|0.8|
XLV|Health Care Select Sector SPDR Fund|Health|NYSE Arca|136|138|13|0.7|
XLY|Consumer Discretionary Select Sector SPDR Fund|Consumer Cyclical|NYSE Arca|178|225|20|1.15|
XLP|Consumer Staples Select Sector SPDR Fund|Consumer Defensive|NYSE Arca|72|79|12|0.55|
XLI|Industrial Select Sector SPDR Fund|Industrials|NYSE Arca|113|132|16|1.0|
XLU|Utilities Select Sector SPDR Fund|Utilities|NYSE Arca|64|76|17|0.5|
XLB|Materials Select Sector SPDR Fund|Natural Resources|NYSE Arca|86|84|17|0.95|
XLRE|Real Estate Select Sector SPDR Fund|Real Estate|NYSE Arca|40|41|19|0.9|
XLC|Communication Services Select Sector SPDR Fund|Communications|NYSE Arca|73|97|19|1.05|
SMH|VanEck Semiconductor ETF|Technology|NASDAQ|174|243|35|1.5|
ARKK|ARK Innovation ETF|Mid-Cap Growth|NYSE Arca|52|57|45|1.6|
"""

# ticker | name | exchange | currency | level 2000-01-03 | p_2024_01 | p_2024_12 | vol % | seed
_INDICES = """
SPY|SPDR S&P 500 ETF Trust|NYSE Arca|USD|145|472|586|16|^GSPC
^GSPC|S&P 500|SNP|USD|1455|4742|5882|16|
^DJI|Dow Jones Industrial Average|DJI|USD|11357|37715|42544|14|
^IXIC|NASDAQ Composite|NASDAQ|USD|4131|15011|19311|21|^NDX
^NDX|NASDAQ 100|NASDAQ|USD|3790|16543|21012|22|
^RUT|Russell 2000|Russell|USD|497|2022|2230|22|
^N225|Nikkei 225|Osaka|JPY|18937|33288|39895|20|
^HSI|Hang Seng Index|HKSE|HKD|17370|16789|20060|24|
^FTSE|FTSE 100|FTSE Index|GBP|6665|7722|8173|14|
^NSEI|NIFTY 50|NSE|INR|1592|21742|23645|14|
^BSESN|S&P BSE SENSEX|BSE|INR|5376|71892|78139|14|^NSEI
^GSPTSE|S&P/TSX Composite index|Toronto|CAD|8481|20958|24728|13|
^AXJO|S&P/ASX 200|ASX|AUD|3153|7590|8159|13|
000001.SS|SSE Composite Index|Shanghai|CNY|1407|2962|3352|22|
399001.SZ|Shenzhen Component|Shenzhen|CNY|3534|9387|10415|25|
^STOXX50E|EURO STOXX 50|STOXX|EUR|4850|4512|4896|18|
^GDAXI|DAX Performance Index|XETRA|EUR|6750|16769|19909|18|
^FCHI|CAC 40|Paris|EUR|5917|7543|7381|17|
"""


EXAMPLE_CASE = ("NVDA", "2024-05-10")
"""The Run page's "Run an example": the session the README quotes (NVDA at its real close, 89.87), where the
demo market gives the offline team a decisive call with a full plan (an entry, a target and a stop): what a
first run shows a committee. ``tests/test_example_case.py`` keeps it decisive."""


# More real closes (approximate, split-adjusted as Yahoo Finance shows them): NVDA's three sessions
# the README's CSV example quotes, the last session of 2025 for the most-shown names (so a date in
# 2025 or 2026 trades near the real level), and the S&P 500's year ends (so a long chart of the
# benchmark has its real shape: no −35 % year where the index rose). Between anchors the path
# stays synthetic.
_LATER_ANCHORS = """
NVDA|2024-05-08|90.41
NVDA|2024-05-09|88.75
NVDA|2024-05-10|89.87
NVDA|2025-12-31|186.5
AAPL|2025-12-31|271.9
MSFT|2025-12-31|483.6
GOOGL|2025-12-31|313.0
GOOG|2025-12-31|313.8
AMZN|2025-12-31|230.8
META|2025-12-31|660.1
TSLA|2025-12-31|449.7
JPM|2025-12-31|322.2
XOM|2025-12-31|120.3
SPY|2025-12-31|681.9
^GSPC|2025-12-31|6845.5
^GSPC|2000-12-29|1320.3
^GSPC|2001-12-31|1148.1
^GSPC|2002-12-31|879.8
^GSPC|2003-12-31|1111.9
^GSPC|2004-12-31|1211.9
^GSPC|2005-12-30|1248.3
^GSPC|2006-12-29|1418.3
^GSPC|2007-12-31|1468.4
^GSPC|2008-12-31|903.3
^GSPC|2009-12-31|1115.1
^GSPC|2010-12-31|1257.6
^GSPC|2011-12-30|1257.6
^GSPC|2012-12-31|1426.2
^GSPC|2013-12-31|1848.4
^GSPC|2014-12-31|2058.9
^GSPC|2015-12-31|2043.9
^GSPC|2016-12-30|2238.8
^GSPC|2017-12-29|2673.6
^GSPC|2018-12-31|2506.9
^GSPC|2019-12-31|3230.8
^GSPC|2020-12-31|3756.1
^GSPC|2021-12-31|4766.2
^GSPC|2022-12-30|3839.5
"""


def _later_anchors() -> dict[str, tuple[tuple[str, float], ...]]:
    out: dict[str, list[tuple[str, float]]] = {}
    for line in _LATER_ANCHORS.strip().splitlines():
        ticker, day, close = line.split("|")
        out.setdefault(ticker, []).append((day, float(close)))
    return {t: tuple(v) for t, v in out.items()}


def _float(text: str) -> float | None:
    text = text.strip()
    return float(text) if text else None


@functools.lru_cache(maxsize=1)
def table() -> dict[str, dict[str, Any]]:
    """Every known instrument by ticker: kind (stock, etf, index), identity and price anchors."""
    out: dict[str, dict[str, Any]] = {}
    for (exchange, currency), block in _STOCKS.items():
        for line in block.strip().splitlines():
            parts = line.split("|")
            ticker, name, sector, industry, p0, p1, vol, shares = parts[:8]
            out[ticker] = {
                "kind": "stock", "name": name, "sector": sector, "industry": industry,
                "exchange": exchange, "currency": currency, "anchors": ((ANCHOR_DATES[0], float(p0)),
                                                                       (ANCHOR_DATES[1], float(p1))),
                "vol": float(vol) / 100.0, "shares": float(shares) * 1e9,
                "beta": _float(parts[8]) if len(parts) > 8 else None, "seed": None,
            }
    for line in _FUNDS.strip().splitlines():
        ticker, name, category, exchange, p0, p1, vol, beta, seed = line.split("|")
        out[ticker] = {
            "kind": "etf", "name": name, "sector": "ETF", "industry": category, "exchange": exchange,
            "currency": "USD", "anchors": ((ANCHOR_DATES[0], float(p0)), (ANCHOR_DATES[1], float(p1))),
            "vol": float(vol) / 100.0, "shares": None, "beta": float(beta), "seed": seed or None,
        }
    for line in _INDICES.strip().splitlines():
        ticker, name, exchange, currency, start, p0, p1, vol, seed = line.split("|")
        is_fund = not ticker.startswith("^") and not ticker[0].isdigit()
        out[ticker] = {
            "kind": "index", "name": name, "sector": "ETF" if is_fund else "Index",
            "industry": "Large Blend" if is_fund else "Market index", "exchange": exchange,
            "currency": currency,
            "anchors": ((INDEX_START_DATE, float(start)), (ANCHOR_DATES[0], float(p0)), (ANCHOR_DATES[1], float(p1))),
            "vol": float(vol) / 100.0, "shares": None, "beta": 1.0, "seed": seed or None,
        }
    for ticker, extra in _later_anchors().items():
        out[ticker]["anchors"] = tuple(sorted((*out[ticker]["anchors"], *extra)))
    return out


def known(ticker: str) -> dict[str, Any] | None:
    """The table row of a ticker, or None (the demo market then generates a fictional profile).

    A US share class written with a dot (BRK.B, as many sites do) finds Yahoo's spelling (BRK-B).
    """
    rows = table()
    row = rows.get(ticker)
    if row is None and len(ticker) > 2 and ticker[-2] == "." and ticker[-1].isalpha():
        row = rows.get(f"{ticker[:-2]}-{ticker[-1]}")
    return row


def suggest(ticker: str, n: int = 3) -> list[str]:
    """The known tickers closest to ``ticker`` (a typo's likely meaning), closest first; may be empty.

    Close spellings first (difflib on the whole ticker, then on its part before an exchange
    suffix), then known tickers that start with what was typed ("NVDAA" → NVDA, "SAP.DE" → SAP).
    """
    import difflib

    rows = table()
    want = ticker.strip().upper()
    out: list[str] = []

    def add(names) -> None:
        for name in names:
            if name not in out and name != want:
                out.append(name)

    add(difflib.get_close_matches(want, rows, n=n, cutoff=0.7))
    base = want.split(".")[0]
    if base != want:
        add(t for t in rows if t == base)
        add(difflib.get_close_matches(base, rows, n=n, cutoff=0.7))
    add(sorted((t for t in rows if len(t) >= 2 and want.startswith(t)), key=len, reverse=True))
    return out[:n]


__all__ = ["ANCHOR_DATES", "EXAMPLE_CASE", "INDEX_START_DATE", "LEAD_IN_DATE", "known", "suggest", "table"]
